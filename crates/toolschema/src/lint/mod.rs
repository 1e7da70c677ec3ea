//! Schema lint: rules that find what makes a tool catalog unsafe or unreadable for clients, with
//! positions in the file and fixes as text edits.
//!
//! - [`registry`]: every rule ([`RULES`]), looked up by code, selected by code or prefix;
//! - [`rules`]: one file per rule, with its code, severity, documentation and check;
//! - [`Linter`]: lints one file's text, one tool at a time (a large catalog is never built as a
//!   whole), and fixes it ([`Linter::fix`]);
//! - [`LintConfig`]: the `[lint]` settings of `toolschema.toml`.
//!
//! ```
//! use toolschema::lint::{Linter, RuleSelection};
//!
//! let text = r#"{"tools": [{"name": "search", "description": "Search the docs by keyword.",
//!   "inputSchema": {"type": "object", "properties": {"q": {"type": "string", "maxLength": 99,
//!   "description": "Words to find"}}, "required": ["q"]}}]}"#;
//! let linter = Linter::new(RuleSelection::all());
//! let report = linter.lint("tools.json", text).unwrap();
//! let found: Vec<_> = report.diagnostics.iter().map(|d| (d.code(), d.position.line)).collect();
//! assert_eq!(found, [("SCH-002", 2)]);
//!
//! let fixed = linter.fix("tools.json", text, false).unwrap();
//! assert!(fixed.text.contains(r#""required": ["q"], "additionalProperties": false}"#));
//! assert!(fixed.remaining.diagnostics.is_empty());
//! ```

pub mod config;
mod context;
mod diagnostic;
pub mod registry;
pub mod rules;
mod schema_walk;
#[cfg(test)]
mod snapshot;
mod source_edit;
mod value_fit;

pub use config::{ConfigError, ConfigFile, LintConfig, LintSettings};
pub use diagnostic::{Applicability, Diagnostic, Edit, Fix, Severity};
pub use registry::{rule, Rule, RuleSelection, UnknownSelector, RULES};

use crate::catalog::{CatalogError, CatalogLayout, SourceTool};
use crate::json::LineIndex;
use context::{EarlierTool, NamedTool, Report, RunCache, ToolContext};
use registry::Check;
use source_edit::{apply_edits, conflicts};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

/// What linting one file found.
#[derive(Debug, Clone, Default)]
pub struct FileReport {
    /// The findings, in file order.
    pub diagnostics: Vec<Diagnostic>,
    /// How many tools the file holds.
    pub tools: usize,
}

/// A fixed file.
#[derive(Debug, Clone)]
pub struct Fixed {
    /// The fixed text (the input itself when nothing was fixed).
    pub text: String,
    /// How many findings the fixes resolved.
    pub fixed: usize,
    /// What linting the fixed text finds.
    pub remaining: FileReport,
}

/// Why a file could not be fixed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FixError {
    /// The file cannot be linted.
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    /// A fix produced text that does not lint (a bug in a rule's fix): nothing is written.
    #[error(
        "applying fixes produced invalid output ({0}); nothing was changed (please report this)"
    )]
    Broken(String),
}

/// Most rounds of fixing: fixes whose edits overlap are applied one round at a time, and each
/// round lints the result again.
const MAX_FIX_ROUNDS: usize = 10;

/// Lints catalog files with a selection of rules.
#[derive(Debug, Clone)]
pub struct Linter {
    rules: Vec<&'static Rule>,
    threads: usize,
}

/// Tools a worker takes at a time.
const CHUNK: usize = 32;

/// What linting one tool produced, before the rules that read names in file order.
struct ToolOutcome {
    diagnostics: Vec<Diagnostic>,
    pointer: String,
    /// The tool's name and the offset of its `name` member, when it has a string name.
    name: Option<(String, usize)>,
}

/// Everything a worker needs to lint tools of one file.
struct FileJob<'a> {
    file: &'a str,
    text: &'a str,
    layout: &'a CatalogLayout,
    lines: &'a LineIndex,
    rules: &'a [&'static Rule],
}

impl FileJob<'_> {
    fn lint_tools(&self, range: std::ops::Range<usize>) -> Result<Vec<ToolOutcome>, CatalogError> {
        let cache = RunCache::default();
        range.map(|index| self.lint_tool(index, &cache)).collect()
    }

    fn lint_tool(&self, index: usize, cache: &RunCache) -> Result<ToolOutcome, CatalogError> {
        let tool = self.layout.read_tool(self.file, self.text, index)?;
        let cx = ToolContext::new(self.text, &tool, cache);
        let mut report = Report {
            rule: RULES[0],
            tool: cx.name,
            spans: &tool.spans,
            diagnostics: Vec::new(),
        };
        for rule in self.rules {
            if let Check::Tool(check) = rule.check {
                report.rule = rule;
                check(&cx, &mut report);
            }
        }
        report.fill_positions(self.text, self.lines);
        let diagnostics = report.diagnostics;
        let name = cx.name.map(|name| {
            let offset = cx.field_span("name").and_then(|s| tool.spans.get(s));
            (name.to_string(), offset.map_or(0, |s| s.anchor() as usize))
        });
        drop(cx);
        let SourceTool { value, pointer, .. } = tool;
        crate::json::drop_deep(value);
        Ok(ToolOutcome {
            diagnostics,
            pointer,
            name,
        })
    }
}

impl Linter {
    /// A linter running the selected rules, on as many threads as the machine has cores.
    pub fn new(selection: RuleSelection) -> Self {
        Linter {
            rules: selection.rules().collect(),
            threads: 0,
        }
    }

    /// Lint on at most `threads` threads (0: one per core). Results do not depend on it.
    pub fn with_threads(mut self, threads: usize) -> Self {
        self.threads = threads;
        self
    }

    fn thread_count(&self, tools: usize) -> usize {
        let wanted = match self.threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        };
        wanted.min(tools.div_ceil(CHUNK)).clamp(1, 16)
    }

    /// Lint one file's text, handing each tool's findings (sorted by position) to `each`, tool
    /// after tool in file order. Returns how many tools the file holds.
    ///
    /// `file` names the text in errors. The whole text is checked for syntax first; tools are
    /// then read a few at a time (on several threads for a large catalog), so memory stays close
    /// to the size of the text.
    pub fn lint_each(
        &self,
        file: &str,
        text: &str,
        mut each: impl FnMut(Vec<Diagnostic>),
    ) -> Result<usize, CatalogError> {
        let layout = CatalogLayout::scan(file, text)?;
        let lines = LineIndex::new(text);
        let job = FileJob {
            file,
            text,
            layout: &layout,
            lines: &lines,
            rules: &self.rules,
        };
        let name_rules: Vec<&'static Rule> = self
            .rules
            .iter()
            .copied()
            .filter(|r| matches!(r.check, Check::Name(_)))
            .collect();
        let mut names = NameRules {
            rules: &name_rules,
            earlier: HashMap::new(),
            text,
            lines: &lines,
        };
        let count = layout.tools.len();
        let threads = self.thread_count(count);
        if threads <= 1 {
            for outcome in job.lint_tools(0..count)? {
                each(names.finish(outcome));
            }
            return Ok(count);
        }
        let chunks = count.div_ceil(CHUNK);
        let next = AtomicUsize::new(0);
        std::thread::scope(|scope| {
            let (sender, receiver) = mpsc::sync_channel(threads * 2);
            for _ in 0..threads {
                let sender = sender.clone();
                let (job, next) = (&job, &next);
                scope.spawn(move || loop {
                    let chunk = next.fetch_add(1, Ordering::Relaxed);
                    if chunk >= chunks {
                        return;
                    }
                    let range = chunk * CHUNK..((chunk + 1) * CHUNK).min(count);
                    if sender.send((chunk, job.lint_tools(range))).is_err() {
                        return;
                    }
                });
            }
            drop(sender);
            // Hand results on in file order; chunks that arrive early wait here.
            let mut waiting: BTreeMap<usize, Result<Vec<ToolOutcome>, CatalogError>> =
                BTreeMap::new();
            let mut wanted = 0;
            for (chunk, result) in receiver {
                waiting.insert(chunk, result);
                while let Some(result) = waiting.remove(&wanted) {
                    wanted += 1;
                    match result {
                        Ok(outcomes) => {
                            for outcome in outcomes {
                                each(names.finish(outcome));
                            }
                        }
                        Err(error) => {
                            // Stop the workers: they see the flag and the closed channel.
                            next.store(chunks, Ordering::Relaxed);
                            return Err(error);
                        }
                    }
                }
            }
            Ok(count)
        })
    }

    /// Lint one file's text and collect every finding.
    pub fn lint(&self, file: &str, text: &str) -> Result<FileReport, CatalogError> {
        let mut diagnostics = Vec::new();
        let tools = self.lint_each(file, text, |found| diagnostics.extend(found))?;
        Ok(FileReport { diagnostics, tools })
    }

    /// Apply every safe fix (and the unsafe ones too when `unsafe_fixes`), round after round
    /// until none is left, and lint the result.
    ///
    /// Fixing a fixed text changes nothing.
    pub fn fix(&self, file: &str, text: &str, unsafe_fixes: bool) -> Result<Fixed, FixError> {
        let allowed = |fix: &Fix| unsafe_fixes || fix.applicability == Applicability::Safe;
        let mut current = text.to_string();
        let mut fixed = 0;
        for round in 0..=MAX_FIX_ROUNDS {
            let report = match self.lint(file, &current) {
                Ok(report) => report,
                Err(error) if round == 0 => return Err(error.into()),
                Err(error) => return Err(FixError::Broken(error.to_string())),
            };
            let fixes: Vec<&Fix> = report
                .diagnostics
                .iter()
                .filter_map(|d| d.fix.as_ref())
                .filter(|f| allowed(f))
                .collect();
            if fixes.is_empty() || round == MAX_FIX_ROUNDS {
                return Ok(Fixed {
                    text: current,
                    fixed,
                    remaining: report,
                });
            }
            let mut accepted: Vec<&Edit> = Vec::new();
            for fix in fixes {
                let clear = fix
                    .edits
                    .iter()
                    .all(|e| accepted.iter().all(|a| !conflicts(a, e)));
                if clear {
                    accepted.extend(&fix.edits);
                    fixed += 1;
                }
            }
            current = apply_edits(&current, &accepted);
        }
        Err(FixError::Broken("fixes did not settle".into()))
    }
}

/// The rules that read tool names in file order, with the names seen so far.
struct NameRules<'a> {
    rules: &'a [&'static Rule],
    earlier: HashMap<String, EarlierTool>,
    text: &'a str,
    lines: &'a LineIndex,
}

impl NameRules<'_> {
    /// Run the name rules on one tool's outcome and return all its findings, sorted.
    fn finish(&mut self, outcome: ToolOutcome) -> Vec<Diagnostic> {
        let ToolOutcome {
            mut diagnostics,
            pointer,
            name,
        } = outcome;
        if let Some((name, name_offset)) = name.filter(|(n, _)| !n.is_empty()) {
            if !self.rules.is_empty() {
                let no_spans = crate::json::Spans::default();
                let mut report = Report {
                    rule: self.rules[0],
                    tool: Some(&name),
                    spans: &no_spans,
                    diagnostics: Vec::new(),
                };
                let named = NamedTool {
                    name: &name,
                    pointer: &pointer,
                    name_offset,
                };
                for rule in self.rules {
                    if let Check::Name(check) = rule.check {
                        report.rule = rule;
                        check(&named, &self.earlier, &mut report);
                    }
                }
                report.fill_positions(self.text, self.lines);
                diagnostics.append(&mut report.diagnostics);
            }
            if !self.earlier.contains_key(&name) {
                let position = self.lines.position(self.text, name_offset);
                self.earlier.insert(name, EarlierTool { pointer, position });
            }
        }
        diagnostics.sort_by(|a, b| (a.offset, a.code()).cmp(&(b.offset, b.code())));
        diagnostics
    }
}
