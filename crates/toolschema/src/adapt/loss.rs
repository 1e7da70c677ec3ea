//! The loss report: every place where an adapted tool differs from the original.

use serde::Serialize;
use std::fmt;

/// What happened to a keyword (or a name).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum LossAction {
    /// Removed; nothing stands for it.
    Dropped,
    /// Removed from the schema and written into its description in plain words.
    MovedToDescription,
    /// Written differently, as the provider needs it (what it accepts is said in the message).
    Rewritten,
    /// Replaced by something that accepts more.
    Widened,
    /// A tool or parameter name changed.
    Renamed,
}

impl LossAction {
    /// The kebab-case name: `moved-to-description`.
    pub fn as_str(self) -> &'static str {
        match self {
            LossAction::Dropped => "dropped",
            LossAction::MovedToDescription => "moved-to-description",
            LossAction::Rewritten => "rewritten",
            LossAction::Widened => "widened",
            LossAction::Renamed => "renamed",
        }
    }
}

impl fmt::Display for LossAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How the adapted schema compares with the original at one place.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Accepts {
    /// The same values.
    Same,
    /// More values: a constraint is no longer enforced by the schema.
    More,
    /// Fewer values: the adapted schema refuses some that the original accepted.
    Less,
    /// Values of another shape that [`super::AdaptedTool::restore_arguments`] maps back (an
    /// optional property the model must send as `null`, a renamed parameter).
    Reshaped,
}

/// Which `COMPAT-*` lint rule reports a loss.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Topic {
    /// A tool or parameter name.
    Name,
    /// A keyword the provider does not read.
    Unsupported,
    /// A composition or tuple widened.
    Widening,
    /// Strict mode's closed objects and required properties.
    Strict,
    /// `items` or `properties` added because the provider rejects their absence.
    Missing,
    /// A rewrite that keeps the meaning.
    Rewrite,
}

/// One line of the loss report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Loss {
    /// The tool's original name.
    pub tool: String,
    /// JSON Pointer into the original tool: `/inputSchema/properties/path` (the schema holding
    /// the keyword), or `/name`.
    pub pointer: String,
    /// The keyword (or `name`).
    pub keyword: String,
    /// What happened.
    pub action: LossAction,
    /// What changed for the model, in a sentence.
    pub message: String,
    /// How the adapted schema compares with the original there.
    #[serde(skip)]
    pub accepts: Accepts,
    #[serde(skip)]
    pub(crate) topic: Topic,
}
