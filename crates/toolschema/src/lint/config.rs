//! Lint settings: the `[lint]` table of `toolschema.toml`, and command-line flags layered on it.
//!
//! ```toml
//! [lint]
//! select = ["default", "pedantic"]  # codes, prefixes ("SCH", "SCH-00"), names, ALL, default, pedantic
//! ignore = ["DESC-003"]
//! fail-on = "warning"               # critical, warning or info
//! target = ["openai-strict", "gemini-openapi"]   # providers the COMPAT rules check
//!
//! [lint.severity]                   # a severity of your own for some rules
//! SCH-004 = "info"
//!
//! [lint.per-tool-ignores]           # tool-name globs (* and ?) and the rules they skip
//! "legacy_*" = ["SCH-002", "unbounded-size"]
//! ```
//!
//! Reading the file is the caller's business (the core does no I/O); this module says what it
//! holds and how layers combine.

use super::diagnostic::{Diagnostic, Severity};
use super::registry::{select, Rule, RuleSelection, UnknownSelector};
use crate::adapt::{self, Profile};
use crate::glob::Glob;
use serde::Deserialize;
use std::collections::BTreeMap;

/// The contents of a `toolschema.toml`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// The `[lint]` table.
    #[serde(default)]
    pub lint: LintConfig,
    /// The `[proxy]` table: the proxy's settings, which lint leaves to the proxy. Any other
    /// table is refused, so that a misspelt `[lint]` is not silently ignored.
    #[serde(default)]
    pub proxy: OtherTable,
}

/// A table of `toolschema.toml` that another command reads: accepted, and not looked into.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OtherTable;

impl<'de> Deserialize<'de> for OtherTable {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        serde::de::IgnoredAny::deserialize(deserializer).map(|_| OtherTable)
    }
}

/// One layer of lint settings: the `[lint]` table of a file, or the command line.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct LintConfig {
    /// Rules to run (codes or prefixes, `ALL` for every rule). Replaces the selection of the
    /// layers below.
    pub select: Option<Vec<String>>,
    /// Rules not to run, removed from this layer's selection.
    #[serde(default)]
    pub ignore: Vec<String>,
    /// The least severity that makes a run fail.
    pub fail_on: Option<Severity>,
    /// The model providers the `COMPAT-*` rules check (profile names, see
    /// [`crate::adapt::PROFILE_NAMES`]). Replaces the targets of the layers below.
    pub target: Option<Vec<String>>,
    /// Severities given to rules (by selector), in place of their own. When selectors overlap,
    /// the one naming fewer rules wins.
    #[serde(default)]
    pub severity: BTreeMap<String, Severity>,
    /// Rules (by selector) not run on the tools whose names match a glob (`*` and `?`).
    #[serde(default)]
    pub per_tool_ignores: BTreeMap<String, Vec<String>>,
}

/// Settings that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{origin}: {error}")]
pub struct ConfigError {
    /// Where the setting came from (a file name, or `command line`).
    pub origin: String,
    /// What is wrong.
    pub error: UnknownSelector,
}

/// The settings a run uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LintSettings {
    /// Which rules run.
    pub selection: RuleSelection,
    /// Findings at or above this severity make the run fail (default: warning).
    pub fail_on: Severity,
    /// The providers the `COMPAT-*` rules check (none by default).
    pub targets: Vec<&'static Profile>,
    /// Rules whose findings get another severity than the rule's own.
    pub severities: Vec<(&'static Rule, Severity)>,
    /// Tool-name globs, and the rules not run on the tools they match.
    pub per_tool_ignores: Vec<(Glob, RuleSelection)>,
}

impl Default for LintSettings {
    fn default() -> Self {
        LintSettings {
            selection: RuleSelection::default(),
            fail_on: Severity::Warning,
            targets: Vec::new(),
            severities: Vec::new(),
            per_tool_ignores: Vec::new(),
        }
    }
}

impl LintSettings {
    /// Combine layers, lowest first (each named for errors): a layer's `select` replaces the
    /// selection so far and its `ignore` removes rules; the last `fail-on` and the last `target`
    /// given win.
    pub fn resolve<'a>(
        layers: impl IntoIterator<Item = (&'a str, &'a LintConfig)>,
    ) -> Result<LintSettings, ConfigError> {
        let mut settings = LintSettings::default();
        for (origin, layer) in layers {
            settings
                .selection
                .apply(layer.select.as_deref(), &layer.ignore)
                .map_err(|error| ConfigError {
                    origin: origin.to_string(),
                    error,
                })?;
            if let Some(fail_on) = layer.fail_on {
                settings.fail_on = fail_on;
            }
            if let Some(names) = &layer.target {
                settings.targets.clear();
                for name in names {
                    let profile = adapt::profile(name).map_err(|e| ConfigError {
                        origin: origin.to_string(),
                        error: UnknownSelector {
                            selector: e.name,
                            what: "target profile",
                            suggestion: e.suggestion.map(str::to_string),
                        },
                    })?;
                    if !settings.targets.contains(&profile) {
                        settings.targets.push(profile);
                    }
                }
            }
            let error = |error| ConfigError {
                origin: origin.to_string(),
                error,
            };
            // Broad selectors first, so the one naming fewer rules has the last word.
            let mut severities = Vec::new();
            for (selector, severity) in &layer.severity {
                severities.push((select(selector).map_err(error)?, *severity));
            }
            severities.sort_by_key(|(rules, _)| std::cmp::Reverse(rules.len()));
            for (rules, severity) in severities {
                for rule in rules {
                    settings.severities.retain(|(r, _)| r.code() != rule.code());
                    settings.severities.push((rule, severity));
                }
            }
            for (glob, selectors) in &layer.per_tool_ignores {
                let mut rules = RuleSelection::none();
                rules.apply(Some(selectors), &[]).map_err(error)?;
                settings
                    .per_tool_ignores
                    .push((Glob::new(glob.as_str()), rules));
            }
        }
        Ok(settings)
    }

    /// Whether the settings change findings after the rules made them (severities, per-tool
    /// ignores).
    pub fn adjusts_findings(&self) -> bool {
        !self.severities.is_empty() || !self.per_tool_ignores.is_empty()
    }

    /// Apply severities and per-tool ignores to one tool's findings (the tool rules an ignore
    /// names are not run on its tools at all; this drops the findings of the name rules, which
    /// compare tools with each other).
    pub fn adjust(&self, found: &mut Vec<Diagnostic>) {
        if !self.per_tool_ignores.is_empty() {
            found.retain(|d| {
                let Some(tool) = d.tool.as_deref() else {
                    return true;
                };
                !self
                    .per_tool_ignores
                    .iter()
                    .any(|(glob, rules)| rules.contains(d.rule) && glob.matches(tool))
            });
        }
        for d in found.iter_mut() {
            if let Some((_, severity)) = self.severities.iter().find(|(r, _)| *r == d.rule) {
                d.severity = *severity;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_line_layers_over_the_file() {
        let file = LintConfig {
            select: Some(vec!["SCH".into(), "TOOL".into()]),
            ignore: vec!["SCH-004".into()],
            fail_on: Some(Severity::Critical),
            ..LintConfig::default()
        };
        let cli = LintConfig {
            ignore: vec!["TOOL-002".into()],
            ..LintConfig::default()
        };
        let settings =
            LintSettings::resolve([("toolschema.toml", &file), ("command line", &cli)]).unwrap();
        let codes: Vec<_> = settings.selection.rules().map(|r| r.code()).collect();
        assert!(codes.contains(&"SCH-001") && codes.contains(&"TOOL-001"));
        assert!(!codes.contains(&"SCH-004") && !codes.contains(&"TOOL-002"));
        assert!(!codes.contains(&"DESC-001"));
        assert_eq!(settings.fail_on, Severity::Critical);

        let targets = LintConfig {
            target: Some(vec![
                "gemini".into(),
                "OpenAI-Strict".into(),
                "gemini".into(),
            ]),
            ..LintConfig::default()
        };
        let settings = LintSettings::resolve([("toolschema.toml", &targets)]).unwrap();
        let names: Vec<_> = settings.targets.iter().map(|p| p.name).collect();
        assert_eq!(names, ["gemini", "openai-strict"]);
        let unknown = LintConfig {
            target: Some(vec!["openai-strikt".into()]),
            ..LintConfig::default()
        };
        assert_eq!(
            LintSettings::resolve([("command line", &unknown)])
                .unwrap_err()
                .to_string(),
            "command line: unknown target profile 'openai-strikt' (did you mean 'openai-strict'?)"
        );

        let bad = LintConfig {
            ignore: vec!["SCHEMA".into()],
            ..LintConfig::default()
        };
        assert_eq!(
            LintSettings::resolve([("toolschema.toml", &bad)])
                .unwrap_err()
                .to_string(),
            "toolschema.toml: unknown rule code or prefix 'SCHEMA' (did you mean 'SCH'?)"
        );
    }
}
