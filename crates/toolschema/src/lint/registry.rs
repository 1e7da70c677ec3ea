//! The rules, in one list, and how a selection of them is written (`SCH`, `SCH-001`, `ALL`).

use super::context::{EarlierTools, NamedTool, Report, ToolContext};
use super::diagnostic::{Applicability, Severity};
use crate::suggest::closest;
use std::fmt;

/// What a rule reads.
pub(crate) enum Check {
    /// One tool at a time (on any thread, in any order).
    Tool(fn(&ToolContext<'_>, &mut Report<'_>)),
    /// Each tool's name, in file order, with the names of the tools before it.
    Name(fn(&NamedTool<'_>, &EarlierTools, &mut Report<'_>)),
}

/// Whether a rule runs unless told otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleSet {
    /// Runs by default: its findings on real servers are right (see each rule's precision table).
    Default,
    /// Runs only when selected (`--select pedantic`, `ALL`, or by code or name): style and
    /// hardening advice a well-made server may rightly ignore.
    Pedantic,
}

/// A lint rule: a stable code, a severity, the fixes it can offer, and its documentation.
///
/// The documentation is the rule's own doc comment, captured by `declare_rule!`: `toolschema
/// rules` and `toolschema rule CODE` print it, so it is written once.
pub struct Rule {
    pub(crate) code: &'static str,
    pub(crate) name: &'static str,
    pub(crate) severity: Severity,
    pub(crate) set: RuleSet,
    pub(crate) fixes: &'static [Applicability],
    pub(crate) doc: &'static [&'static str],
    pub(crate) check: Check,
}

impl Rule {
    /// The stable code, like `SCH-001`.
    pub fn code(&self) -> &'static str {
        self.code
    }

    /// The kebab-case name, like `missing-required`.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// How serious its findings are.
    pub fn severity(&self) -> Severity {
        self.severity
    }

    /// Whether it runs by default or only when selected.
    pub fn set(&self) -> RuleSet {
        self.set
    }

    /// The kinds of fix it can offer (empty when it never fixes).
    pub fn fixes(&self) -> &'static [Applicability] {
        self.fixes
    }

    /// The group: the code's prefix (`SCH`, `TOOL`, `DESC`, `OUT`, `SEC`, `COMPAT`).
    pub fn group(&self) -> &'static str {
        self.code.split('-').next().unwrap_or(self.code)
    }

    /// One line saying what it flags: the first line of its documentation.
    pub fn summary(&self) -> &'static str {
        self.doc.first().map_or("", |line| doc_line(line))
    }

    /// The whole documentation, Markdown, one string.
    pub fn documentation(&self) -> String {
        let mut out = String::new();
        for line in self.doc {
            out.push_str(doc_line(line));
            out.push('\n');
        }
        out
    }
}

/// A doc comment line as written after `///` (which keeps the space after the slashes).
fn doc_line(line: &'static str) -> &'static str {
    line.strip_prefix(' ').unwrap_or(line)
}

impl fmt::Debug for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Rule")
            .field("code", &self.code)
            .field("name", &self.name)
            .field("severity", &self.severity)
            .finish_non_exhaustive()
    }
}

impl PartialEq for Rule {
    fn eq(&self, other: &Self) -> bool {
        self.code == other.code
    }
}

impl Eq for Rule {}

/// Declare a rule: its doc comment becomes both the item's documentation and the text `toolschema
/// rule CODE` prints.
macro_rules! declare_rule {
    (
        $(#[doc = $doc:literal])*
        $vis:vis static $rule:ident = {
            code: $code:literal,
            name: $name:literal,
            severity: $severity:ident,
            fixes: [$($fix:ident),* $(,)?],
            check: $kind:ident($check:path),
            $(set: $set:ident,)?
        };
    ) => {
        $(#[doc = $doc])*
        $vis static $rule: $crate::lint::Rule = $crate::lint::Rule {
            code: $code,
            name: $name,
            severity: $crate::lint::Severity::$severity,
            set: declare_rule!(@set $($set)?),
            fixes: &[$($crate::lint::Applicability::$fix),*],
            doc: &[$($doc),*],
            check: $crate::lint::registry::Check::$kind($check),
        };
    };
    (@set) => { $crate::lint::RuleSet::Default };
    (@set $set:ident) => { $crate::lint::RuleSet::$set };
}
pub(crate) use declare_rule;

pub use super::rules::RULES;

/// The rule with this code or name (any case), or an error naming the closest code.
pub fn rule(code: &str) -> Result<&'static Rule, UnknownSelector> {
    RULES
        .iter()
        .copied()
        .find(|r| r.code.eq_ignore_ascii_case(code) || r.name.eq_ignore_ascii_case(code))
        .ok_or_else(|| unknown(code, "rule"))
}

/// A selector (`--select`, `--ignore`, `select = [...]`) that names no rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} '{selector}'{}", .suggestion.as_ref().map(|s| format!(" (did you mean '{s}'?)")).unwrap_or_default())]
pub struct UnknownSelector {
    /// What was written.
    pub selector: String,
    /// `rule` or `rule code or prefix`.
    pub what: &'static str,
    /// The closest code or group.
    pub suggestion: Option<String>,
}

fn unknown(selector: &str, what: &'static str) -> UnknownSelector {
    let upper = selector.to_ascii_uppercase();
    let codes = RULES
        .iter()
        .map(|r| r.code)
        .chain(RULES.iter().map(|r| r.group()))
        .chain(["ALL", "DEFAULT", "PEDANTIC"]);
    let suggestion = closest(&upper, codes).map(str::to_string).or_else(|| {
        closest(&selector.to_ascii_lowercase(), RULES.iter().map(|r| r.name)).map(str::to_string)
    });
    UnknownSelector {
        selector: selector.to_string(),
        what,
        suggestion,
    }
}

/// The rules a selector names, in any case: `ALL`; `DEFAULT` (the rules that run unless told
/// otherwise) or `PEDANTIC` (the opt-in ones); a code (`SCH-001`) or any prefix of codes (`SCH`,
/// `SCH-00`); or a rule's name (`open-object`).
pub fn select(selector: &str) -> Result<Vec<&'static Rule>, UnknownSelector> {
    let wanted = selector.trim().to_ascii_uppercase();
    if wanted.is_empty() {
        return Err(unknown(selector, "rule code or prefix"));
    }
    let found: Vec<&'static Rule> = RULES
        .iter()
        .copied()
        .filter(|r| match wanted.as_str() {
            "ALL" => true,
            "DEFAULT" => r.set == RuleSet::Default,
            "PEDANTIC" => r.set == RuleSet::Pedantic,
            _ => r.code.starts_with(&wanted) || r.name.eq_ignore_ascii_case(selector.trim()),
        })
        .collect();
    if found.is_empty() {
        return Err(unknown(selector, "rule code or prefix"));
    }
    Ok(found)
}

/// Which rules run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleSelection {
    enabled: Vec<bool>,
}

impl Default for RuleSelection {
    /// The default rule set: every rule but the pedantic ones.
    fn default() -> Self {
        RuleSelection {
            enabled: RULES.iter().map(|r| r.set == RuleSet::Default).collect(),
        }
    }
}

impl RuleSelection {
    /// Every rule.
    pub fn all() -> Self {
        RuleSelection {
            enabled: vec![true; RULES.len()],
        }
    }

    /// No rule.
    pub fn none() -> Self {
        RuleSelection {
            enabled: vec![false; RULES.len()],
        }
    }

    /// Apply one layer of settings: `select` (when given) replaces the selection, then `ignore`
    /// removes rules from it.
    pub fn apply(
        &mut self,
        select_list: Option<&[String]>,
        ignore_list: &[String],
    ) -> Result<(), UnknownSelector> {
        if let Some(list) = select_list {
            let mut next = RuleSelection::none();
            for selector in list {
                for rule in select(selector)? {
                    next.set(rule, true);
                }
            }
            *self = next;
        }
        for selector in ignore_list {
            for rule in select(selector)? {
                self.set(rule, false);
            }
        }
        Ok(())
    }

    fn set(&mut self, rule: &Rule, on: bool) {
        if let Some(i) = RULES.iter().position(|r| r.code == rule.code) {
            self.enabled[i] = on;
        }
    }

    /// Whether `rule` runs.
    pub fn contains(&self, rule: &Rule) -> bool {
        RULES
            .iter()
            .position(|r| r.code == rule.code)
            .is_some_and(|i| self.enabled[i])
    }

    /// The rules that run, in code order.
    pub fn rules(&self) -> impl Iterator<Item = &'static Rule> + '_ {
        RULES
            .iter()
            .zip(&self.enabled)
            .filter(|(_, on)| **on)
            .map(|(r, _)| *r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What is wrong with a list of rules: duplicate codes or names (in any group), codes out of
    /// order within a group, unknown groups, missing documentation.
    fn registry_problems(rules: &[&Rule]) -> Vec<String> {
        let mut problems = Vec::new();
        let mut previous = "";
        for rule in rules {
            let Some((group, number)) = rule.code.split_once('-') else {
                problems.push(format!("{}: no group", rule.code));
                continue;
            };
            if !["SCH", "TOOL", "DESC", "OUT", "SEC", "COMPAT"].contains(&group)
                || number.len() != 3
            {
                problems.push(format!("{}: not GROUP-NNN", rule.code));
            }
            if rule.group() == previous.split('-').next().unwrap_or("") && rule.code <= previous {
                problems.push(format!("{} after {previous}", rule.code));
            }
            previous = rule.code;
            let doc = rule.documentation();
            for section in [
                "## What it flags",
                "## Why it matters",
                "## Example",
                "## Fix",
            ] {
                if !doc.contains(section) {
                    problems.push(format!("{} lacks '{section}'", rule.code));
                }
            }
            if !rule.summary().ends_with('.') {
                problems.push(format!("{}: summary must be a sentence", rule.code));
            }
        }
        for (what, mut keys) in [
            ("code", rules.iter().map(|r| r.code).collect::<Vec<_>>()),
            ("name", rules.iter().map(|r| r.name).collect()),
        ] {
            keys.sort_unstable();
            for pair in keys.windows(2) {
                if pair[0] == pair[1] {
                    problems.push(format!("two rules share the {what} {}", pair[0]));
                }
            }
        }
        problems
    }

    #[test]
    fn codes_are_unique_sorted_and_documented() {
        assert_eq!(registry_problems(RULES), Vec::<String>::new());
    }

    #[test]
    fn a_code_or_name_used_twice_is_caught_in_any_group() {
        let base = &crate::lint::rules::missing_required::MISSING_REQUIRED;
        let twin = |code, name| Rule {
            code,
            name,
            severity: base.severity,
            set: base.set,
            fixes: base.fixes,
            doc: base.doc,
            check: Check::Tool(|_, _| {}),
        };
        // The duplicate sits in another group, not next to its twin.
        let duplicate_code = twin("SCH-001", "another-name");
        let mut rules: Vec<&Rule> = RULES.to_vec();
        rules.push(&duplicate_code);
        assert!(registry_problems(&rules).contains(&"two rules share the code SCH-001".to_string()));
        let duplicate_name = twin("OUT-999", base.name);
        let mut rules: Vec<&Rule> = RULES.to_vec();
        rules.push(&duplicate_name);
        assert_eq!(
            registry_problems(&rules),
            ["two rules share the name missing-required"]
        );
    }

    #[test]
    fn selectors() {
        let codes = |s: &str| {
            select(s)
                .unwrap()
                .iter()
                .map(|r| r.code)
                .collect::<Vec<_>>()
        };
        assert_eq!(codes("sch-001"), ["SCH-001"]);
        assert_eq!(
            codes("TOOL"),
            ["TOOL-001", "TOOL-002", "TOOL-003", "TOOL-004"]
        );
        assert_eq!(
            codes("SCH-01"),
            ["SCH-010", "SCH-011", "SCH-012", "SCH-013"]
        );
        assert_eq!(codes("ALL").len(), RULES.len());
        assert_eq!(
            select("SCH-100").unwrap_err().to_string(),
            "unknown rule code or prefix 'SCH-100' (did you mean 'SCH-010'?)"
        );
        assert_eq!(
            rule("desc-9").unwrap_err().to_string(),
            "unknown rule 'desc-9' (did you mean 'DESC'?)"
        );
        assert_eq!(rule("out-001").unwrap().code(), "OUT-001");
    }

    #[test]
    fn layers_select_then_ignore() {
        let mut selection = RuleSelection::all();
        selection.apply(None, &["DESC".into()]).unwrap();
        assert!(!selection.contains(&crate::lint::rules::missing_description::MISSING_DESCRIPTION));
        assert!(selection.contains(&crate::lint::rules::open_object::OPEN_OBJECT));
        selection
            .apply(Some(&["DESC-001".into(), "SCH-002".into()]), &[])
            .unwrap();
        let on: Vec<_> = selection.rules().map(|r| r.code).collect();
        assert_eq!(on, ["SCH-002", "DESC-001"]);
    }
}
