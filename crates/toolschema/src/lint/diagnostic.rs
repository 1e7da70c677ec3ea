//! What a rule found, where it is, and the fix it offers.

use super::registry::Rule;
use crate::json::Position;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::fmt;
use std::ops::Range;
use std::str::FromStr;
use std::sync::Arc;

/// How serious a finding is. Ordered: `Info < Warning < Critical`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default,
)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing; does not break anything.
    Info,
    /// Lets bad input through, or makes some clients reject or misread the tool.
    #[default]
    Warning,
    /// The tool is broken: clients reject it or cannot validate against it.
    Critical,
}

impl Severity {
    /// The lowercase name: `info`, `warning` or `critical`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Critical => "critical",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Severity {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "info" => Ok(Severity::Info),
            "warning" => Ok(Severity::Warning),
            "critical" => Ok(Severity::Critical),
            other => Err(format!(
                "unknown severity '{other}': use critical, warning or info"
            )),
        }
    }
}

/// Whether a fix keeps the tool's contract or changes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Applicability {
    /// Applied by `--fix`: every instance the schema accepted before, using the properties it
    /// declares, is accepted after (a property test holds the rules to it), and nothing is
    /// invented.
    Safe,
    /// Applied only with `--unsafe-fixes`: it changes what callers must send.
    Unsafe,
}

impl Applicability {
    /// `safe` or `unsafe`.
    pub fn as_str(self) -> &'static str {
        match self {
            Applicability::Safe => "safe",
            Applicability::Unsafe => "unsafe",
        }
    }
}

impl fmt::Display for Applicability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Replace a byte range of the file with new text (an empty range inserts).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    /// Byte range of the original text.
    pub range: Range<usize>,
    /// The text that takes its place.
    pub replacement: String,
}

impl Edit {
    /// Insert `text` at byte `offset`.
    pub fn insert(offset: usize, text: impl Into<String>) -> Edit {
        Edit {
            range: offset..offset,
            replacement: text.into(),
        }
    }

    /// Replace `range` with `text`.
    pub fn replace(range: Range<usize>, text: impl Into<String>) -> Edit {
        Edit {
            range,
            replacement: text.into(),
        }
    }

    /// Delete `range`.
    pub fn delete(range: Range<usize>) -> Edit {
        Edit {
            range,
            replacement: String::new(),
        }
    }
}

/// A fix: text edits on the original file, applied together or not at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fix {
    /// Safe or unsafe.
    pub applicability: Applicability,
    /// What the fix does, for people (`add "additionalProperties": false`).
    pub title: Cow<'static, str>,
    /// The edits, on the text the diagnostic was found in.
    pub edits: Vec<Edit>,
}

/// One finding: a rule, a place in the file, a message, and maybe a fix.
#[derive(Debug, Clone)]
pub struct Diagnostic {
    /// The rule that found it.
    pub rule: &'static Rule,
    /// The tool's name, when it has a string one (shared by the tool's findings).
    pub tool: Option<Arc<str>>,
    /// JSON Pointer into the file at the value the finding is about.
    pub pointer: String,
    /// Byte offset in the file the finding points at (the member's key, else the value).
    pub offset: usize,
    /// Line and column of `offset`.
    pub position: Position,
    /// How serious it is: the rule's severity, unless the settings override it.
    pub severity: Severity,
    /// What is wrong and what would fix it.
    pub message: String,
    /// The fix, when the rule can make one here.
    pub fix: Option<Fix>,
}

impl Diagnostic {
    /// The rule's code, like `SCH-001`.
    pub fn code(&self) -> &'static str {
        self.rule.code()
    }

    /// How serious it is (the rule's severity, or the one the settings give the rule).
    pub fn severity(&self) -> Severity {
        self.severity
    }

    /// The applicability of the fix, if there is one.
    pub fn fix_applicability(&self) -> Option<Applicability> {
        self.fix.as_ref().map(|f| f.applicability)
    }
}
