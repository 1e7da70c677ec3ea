//! Lint settings: the `[lint]` table of `toolschema.toml`, and command-line flags layered on it.
//!
//! ```toml
//! [lint]
//! select = ["ALL"]          # codes or prefixes: "SCH", "SCH-00", "TOOL-001"
//! ignore = ["DESC-003"]
//! fail-on = "warning"       # critical, warning or info
//! target = ["openai-strict", "gemini-openapi"]   # providers the COMPAT rules check
//! ```
//!
//! Reading the file is the caller's business (the core does no I/O); this module says what it
//! holds and how layers combine.

use super::diagnostic::Severity;
use super::registry::{RuleSelection, UnknownSelector};
use crate::adapt::{self, Profile};
use serde::Deserialize;

/// The contents of a `toolschema.toml`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// The `[lint]` table.
    #[serde(default)]
    pub lint: LintConfig,
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
}

impl Default for LintSettings {
    fn default() -> Self {
        LintSettings {
            selection: RuleSelection::all(),
            fail_on: Severity::Warning,
            targets: Vec::new(),
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
        }
        Ok(settings)
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
            target: None,
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
