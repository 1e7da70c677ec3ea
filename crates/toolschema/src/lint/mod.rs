//! Schema lint: rules that find what makes a tool catalog unsafe or unreadable for clients, with
//! positions in the file and fixes as text edits.
//!
//! - [`registry`]: every rule ([`RULES`]), looked up by code, selected by code or prefix;
//! - [`rules`]: one file per rule, with its code, severity, documentation and check;
//! - [`Linter`]: lints one file's text, one tool at a time (a large catalog is never built as a
//!   whole), or a file read a piece at a time ([`Linter::lint_source_each`]: a large catalog is
//!   never held whole), and fixes it ([`Linter::fix`]);
//! - [`LintConfig`]: the `[lint]` settings of `toolschema.toml`;
//! - [`Linter::with_targets`]: the model providers (see [`crate::adapt`]) whose rules the
//!   `COMPAT-*` rules check.
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

mod compat;
pub mod config;
pub(crate) mod context;
mod diagnostic;
mod parallel;
pub mod registry;
pub mod rules;
mod schema_walk;
#[cfg(test)]
mod snapshot;
mod source_edit;
mod texts;
mod translated;
pub(crate) mod value_fit;

pub use crate::catalog::TextPiece;
pub use config::{ConfigError, ConfigFile, LintConfig, LintSettings};
pub use diagnostic::{Applicability, Diagnostic, Edit, Fix, Severity};
pub use registry::{rule, Rule, RuleSelection, RuleSet, UnknownSelector, RULES};

use crate::adapt::Profile;
use crate::catalog::{ByteSource, CatalogError, CatalogLayout, SourceTool, ToolLocation};
use crate::json::LineCursor;
use context::{skeleton, EarlierTool, EarlierTools, NamedTool, Report, RunCache, ToolContext};
use registry::Check;
use source_edit::{apply_edits, conflicts};
use std::sync::Arc;
use translated::Translated;

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
    /// The fixes applied, in the order they were.
    pub applied: Vec<AppliedFix>,
    /// What linting the fixed text finds.
    pub remaining: FileReport,
}

/// A fix that was applied.
#[derive(Debug, Clone)]
pub struct AppliedFix {
    /// The rule whose finding it resolved.
    pub rule: &'static Rule,
    /// The tool it changed, when it has a string name.
    pub tool: Option<Arc<str>>,
    /// What it did (`add "additionalProperties": false`).
    pub title: std::borrow::Cow<'static, str>,
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
    /// How much of a file read in pieces is scanned at a time.
    block: usize,
    with_edits: bool,
    targets: Vec<&'static Profile>,
    /// Settings that change findings once made (severities, per-tool ignores), when any.
    adjust: Option<Arc<LintSettings>>,
}

/// Texts longer than this are linted on several threads (unless told otherwise).
const PARALLEL_ABOVE: usize = 256 << 10;

/// What linting one tool produced, before the rules that read names in file order.
struct ToolOutcome {
    /// The findings of the tool rules, sorted, with their positions.
    diagnostics: Vec<Diagnostic>,
    /// JSON Pointer to the tool.
    pointer: String,
    /// Where the tool starts: its first byte and position.
    start: (usize, crate::json::Position),
    /// The tool's name (shared with its findings) and the offset of its `name` member, when it
    /// has a string name.
    name: Option<(Arc<str>, usize)>,
    /// The name's confusable skeleton, when a rule compares names by how they look: made here,
    /// on the thread that linted the tool, not in the file-order pass that reads it.
    skeleton: Option<String>,
}

/// Where a file's text comes from.
#[derive(Clone, Copy)]
enum FileText<'a> {
    /// All of it, in memory.
    Whole(&'a str),
    /// Read a piece at a time: a few tools' text, with [`PIECE_MARGIN`] around them.
    Source(&'a dyn ByteSource),
}

/// How many bytes around a finding's offset, at least, the piece of text a finding is handed with
/// holds, where the file has them (see [`Linter::lint_source_each`]).
pub const PIECE_MARGIN: usize = 1024;

/// Everything a thread needs to lint tools of one file.
struct FileJob<'a> {
    with_edits: bool,
    file: &'a str,
    text: FileText<'a>,
    /// How much of a file read in pieces is scanned at a time.
    block: usize,
    rules: &'a [&'static Rule],
    targets: &'a [&'static Profile],
    /// Whether tool names' skeletons are needed (see [`ToolOutcome::skeleton`]).
    skeletons: bool,
    /// `[lint.per-tool-ignores]`: tool-name globs and the rules not run on those tools.
    ignores: &'a [(crate::glob::Glob, RuleSelection)],
}

impl FileJob<'_> {
    /// Lint the tool at `location`, whose text is in `piece`: offsets in the outcome are offsets
    /// into the file.
    fn lint_tool(
        &self,
        piece: TextPiece<'_>,
        location: &ToolLocation,
        cache: &RunCache,
    ) -> Result<ToolOutcome, CatalogError> {
        let tool = location.read_reusing(self.file, piece, cache.spans.take())?;
        let TextPiece {
            start: piece_start,
            text: piece,
        } = piece;
        let translated = Translated::of(&tool);
        let cx = ToolContext::new(piece, &tool, translated.as_ref(), cache, self.targets);
        let mut report = Report {
            rule: RULES[0],
            tool: cx.name.map(Arc::from),
            spans: cx.spans(),
            diagnostics: Vec::new(),
            with_edits: self.with_edits,
        };
        let ignored: Vec<&RuleSelection> = match cx.name {
            Some(name) => self
                .ignores
                .iter()
                .filter(|(glob, _)| glob.matches(name))
                .map(|(_, rules)| rules)
                .collect(),
            None => Vec::new(),
        };
        for rule in self.rules {
            if let Check::Tool(check) = rule.check {
                if ignored.iter().any(|rules| rules.contains(rule)) {
                    continue;
                }
                report.rule = rule;
                check(&cx, &mut report);
            }
        }
        let Report {
            mut diagnostics,
            tool: shared_name,
            ..
        } = report;
        if let Some(translated) = &translated {
            for d in &mut diagnostics {
                if let Some(source) = translated.source_pointer(&d.pointer) {
                    d.pointer = source;
                    // Only a fix of the written schema as a whole has edits that fit the file.
                    if d.pointer != translated.input_pointer() {
                        d.fix = None;
                    }
                }
            }
        }
        // Positions are found here, while the tool's text is fresh in this thread's cache:
        // sorted, the findings come in file order.
        diagnostics.sort_by(in_file_order);
        let start = location.range.start - piece_start;
        let mut lines = LineCursor::new(piece, start, location.position());
        for d in &mut diagnostics {
            d.position = lines.position(d.offset);
            d.offset += piece_start;
            for edit in d.fix.iter_mut().flat_map(|fix| &mut fix.edits) {
                edit.range = edit.range.start + piece_start..edit.range.end + piece_start;
            }
        }
        let name = shared_name.map(|name| {
            let offset = cx.field_span("name").and_then(|s| cx.spans().get(s));
            (
                name,
                offset.map_or(0, |s| piece_start + s.anchor() as usize),
            )
        });
        let skeleton = match &name {
            Some((name, _)) if self.skeletons => Some(skeleton(name)),
            _ => None,
        };
        drop(cx);
        // The reader refuses values nested deeper than MAX_DEPTH, so a plain drop is safe.
        let SourceTool { pointer, spans, .. } = tool;
        cache.spans.set(spans.into_entries());
        Ok(ToolOutcome {
            diagnostics,
            pointer,
            start: (location.range.start, location.position()),
            name,
            skeleton,
        })
    }
}

impl Linter {
    /// A linter running the selected rules; a large catalog is linted on every core.
    pub fn new(selection: RuleSelection) -> Self {
        Linter {
            rules: selection.rules().collect(),
            threads: 0,
            block: crate::catalog::BLOCK,
            with_edits: true,
            targets: Vec::new(),
            adjust: None,
        }
    }

    /// The model providers whose rules the `COMPAT-*` rules check (none by default: those rules
    /// then find nothing).
    pub fn with_targets(mut self, targets: Vec<&'static Profile>) -> Self {
        self.targets = targets;
        self
    }

    /// A linter with every setting of a run: the selected rules, the providers the `COMPAT-*`
    /// rules check, severities of your own, and rules ignored for some tools.
    pub fn from_settings(settings: &LintSettings) -> Self {
        let mut linter =
            Linter::new(settings.selection.clone()).with_targets(settings.targets.clone());
        if settings.adjusts_findings() {
            linter.adjust = Some(Arc::new(settings.clone()));
        }
        linter
    }

    /// Whether [`Linter::lint`] and [`Linter::lint_each`] give fixes their edits (the default).
    /// Without them a finding still says whether a safe or an unsafe fix exists, and linting a
    /// large catalog is faster. [`Linter::fix`] always builds the edits it applies.
    pub fn with_edits(mut self, yes: bool) -> Self {
        self.with_edits = yes;
        self
    }

    /// Lint on `threads` threads, the calling one included (0, the default: one per core for
    /// texts over 256 KiB, only the calling one for smaller ones). Results do not depend on it.
    pub fn with_threads(mut self, threads: usize) -> Self {
        self.threads = threads;
        self
    }

    fn threads_for(&self, text_len: usize) -> usize {
        let threads = match self.threads {
            0 if text_len <= PARALLEL_ABOVE => 1,
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        };
        threads.clamp(1, 16)
    }

    /// Lint one file's text, showing each tool's findings (sorted by position) to `each`, tool
    /// after tool in file order. Returns how many tools the file holds.
    ///
    /// `file` names the text in errors. Nothing is handed over unless the whole text is valid
    /// JSON in a catalog shape. Tools are read a few at a time, so memory stays close to the size
    /// of the text; on several threads, they are linted while the rest of the text is checked.
    pub fn lint_each(
        &self,
        file: &str,
        text: &str,
        mut each: impl FnMut(&[Diagnostic]),
    ) -> Result<usize, CatalogError> {
        let tools = self.lint_with(file, FileText::Whole(text), |found, _| each(found))?;
        Ok(tools.unwrap_or_default())
    }

    /// [`Linter::lint_each`] for a file read a piece at a time from `source`, so that memory
    /// stays far below the size of a large file: its syntax is checked a block at a time, then its
    /// tools are read back by offset, a few at a time. `each` gets each tool's findings with the
    /// piece of the file they are in, which holds at least [`PIECE_MARGIN`] bytes on either side
    /// of each finding's offset where the file has them.
    ///
    /// Returns `Ok(None)`, having handed nothing on, when the file must be linted as a whole text
    /// instead ([`Linter::lint_each`]): when it is not a list or an array of tools (one tool, an
    /// error response, not a catalog), has a syntax error (reported in the whole-text scan's
    /// words) or is not UTF-8, or when this linter builds the edits of fixes (they are made on
    /// the whole text). A file that changes while it is read may be reported as a syntax error,
    /// a read error, or linted as it was when each piece was read.
    pub fn lint_source_each(
        &self,
        file: &str,
        source: &dyn ByteSource,
        mut each: impl FnMut(&[Diagnostic], TextPiece<'_>),
    ) -> Result<Option<usize>, CatalogError> {
        if self.with_edits {
            return Ok(None);
        }
        self.lint_with(file, FileText::Source(source), |found, piece| {
            each(found, piece)
        })
    }

    /// Lint one file's text and collect every finding.
    pub fn lint(&self, file: &str, text: &str) -> Result<FileReport, CatalogError> {
        let mut diagnostics = Vec::new();
        let tools = self.lint_with(file, FileText::Whole(text), |found, _| {
            diagnostics.append(found)
        })?;
        Ok(FileReport {
            diagnostics,
            tools: tools.unwrap_or_default(),
        })
    }

    /// [`Linter::lint_each`] and [`Linter::lint_source_each`], lending `each` the findings: it
    /// may take them; the ones it leaves are freed on the thread that made them.
    fn lint_with(
        &self,
        file: &str,
        text: FileText<'_>,
        mut each: impl FnMut(&mut Vec<Diagnostic>, TextPiece<'_>),
    ) -> Result<Option<usize>, CatalogError> {
        let job = FileJob {
            with_edits: self.with_edits,
            file,
            text,
            block: self.block,
            rules: &self.rules,
            targets: &self.targets,
            skeletons: compares_looks(&self.rules),
            ignores: self
                .adjust
                .as_deref()
                .map_or(&[], |settings| &settings.per_tool_ignores),
        };
        let name_rules: Vec<&'static Rule> = self
            .rules
            .iter()
            .copied()
            .filter(|r| matches!(r.check, Check::Name(_)))
            .collect();
        let threads = self.threads_for(match text {
            FileText::Whole(text) => text.len(),
            FileText::Source(source) => source.byte_len(),
        });
        let adjust = self.adjust.as_deref();
        if let (1, FileText::Whole(text)) = (threads, text) {
            let layout = CatalogLayout::scan(file, text)?;
            let mut names = NameRules::new(&name_rules, layout.tools.len());
            let mut said = SaidOnce::default();
            let cache = RunCache::default();
            for location in &layout.tools {
                let mut outcome = job.lint_tool(TextPiece::whole(text), location, &cache)?;
                names.finish(&mut outcome, TextPiece::whole(text));
                if let Some(settings) = adjust {
                    settings.adjust(&mut outcome.diagnostics);
                }
                said.finish(&mut outcome);
                each(&mut outcome.diagnostics, TextPiece::whole(text));
            }
            return Ok(Some(layout.tools.len()));
        }
        parallel::lint_in_parallel(&job, threads - 1, |tools| {
            let mut names = NameRules::new(&name_rules, tools);
            let mut said = SaidOnce::default();
            move |outcome, piece| {
                names.finish(outcome, piece);
                if let Some(settings) = adjust {
                    settings.adjust(&mut outcome.diagnostics);
                }
                said.finish(outcome);
                each(&mut outcome.diagnostics, piece);
            }
        })
    }

    /// Apply every safe fix (and the unsafe ones too when `unsafe_fixes`), round after round
    /// until none is left, and lint the result.
    ///
    /// Fixing a fixed text changes nothing.
    pub fn fix(&self, file: &str, text: &str, unsafe_fixes: bool) -> Result<Fixed, FixError> {
        let allowed = |fix: &Fix| unsafe_fixes || fix.applicability == Applicability::Safe;
        let linter = self.clone().with_edits(true);
        let mut current = text.to_string();
        let mut applied = Vec::new();
        for round in 0..=MAX_FIX_ROUNDS {
            let report = match linter.lint(file, &current) {
                Ok(report) => report,
                Err(error) if round == 0 => return Err(error.into()),
                Err(error) => return Err(FixError::Broken(error.to_string())),
            };
            let fixes: Vec<(&Diagnostic, &Fix)> = report
                .diagnostics
                .iter()
                .filter_map(|d| Some((d, d.fix.as_ref()?)))
                .filter(|(_, f)| allowed(f))
                .collect();
            if fixes.is_empty() || round == MAX_FIX_ROUNDS {
                return Ok(Fixed {
                    text: current,
                    fixed: applied.len(),
                    applied,
                    remaining: report,
                });
            }
            let mut accepted: Vec<&Edit> = Vec::new();
            for (finding, fix) in fixes {
                let clear = fix
                    .edits
                    .iter()
                    .all(|e| accepted.iter().all(|a| !conflicts(a, e)));
                if clear {
                    accepted.extend(&fix.edits);
                    applied.push(AppliedFix {
                        rule: finding.rule,
                        tool: finding.tool.clone(),
                        title: fix.title.clone(),
                    });
                }
            }
            current = apply_edits(&current, &accepted);
        }
        Err(FixError::Broken("fixes did not settle".into()))
    }
}

/// The order findings are handed on in: by place, then by code.
fn in_file_order(a: &Diagnostic, b: &Diagnostic) -> std::cmp::Ordering {
    (a.offset, a.code()).cmp(&(b.offset, b.code()))
}

/// Whether a rule that compares tool names by how they look runs: skeletons cost time on every
/// name, so they are made only then.
fn compares_looks(rules: &[&'static Rule]) -> bool {
    rules
        .iter()
        .any(|r| std::ptr::eq(*r, &rules::confusable_name::CONFUSABLE_NAME))
}

/// Findings said once per file, in file order: the same rewrite (COMPAT-006) with the same
/// words at the same place of several tools, such as a draft-07 `$schema` left out of every
/// tool, is said at its first tool only. It is one fact about the file, not one per tool.
#[derive(Default)]
struct SaidOnce(std::collections::HashSet<(String, String)>);

impl SaidOnce {
    /// Leave out of `outcome` the findings an earlier tool of the file had.
    fn finish(&mut self, outcome: &mut ToolOutcome) {
        let tool = outcome.pointer.as_str();
        outcome.diagnostics.retain(|d| {
            if !std::ptr::eq(d.rule, &rules::provider_rewrites::PROVIDER_REWRITES) {
                return true;
            }
            let place = d.pointer.strip_prefix(tool).unwrap_or(&d.pointer);
            self.0.insert((place.to_string(), d.message.clone()))
        });
    }
}

/// The rules that read tool names in file order, with the names seen so far.
struct NameRules<'a> {
    rules: &'a [&'static Rule],
    earlier: EarlierTools,
}

impl<'a> NameRules<'a> {
    /// Name rules for a text of `tools` tools.
    fn new(rules: &'a [&'static Rule], tools: usize) -> Self {
        NameRules {
            rules,
            earlier: EarlierTools::new(tools, compares_looks(rules)),
        }
    }

    /// Run the name rules on one tool's outcome, adding their findings (with positions) in file
    /// order.
    ///
    /// The outcome is changed in place and nothing of it is kept: it may have been made on
    /// another thread, which is where it is freed (see [`parallel`]).
    /// `piece` holds the tool's text.
    fn finish(&mut self, outcome: &mut ToolOutcome, piece: TextPiece<'_>) {
        let Some((name, name_offset)) = outcome.name.as_ref().filter(|(n, _)| !n.is_empty()) else {
            return;
        };
        let name_offset = *name_offset;
        let (start, at) = outcome.start;
        let position = |offset: usize| {
            LineCursor::new(piece.text, start - piece.start, at)
                .position(offset.saturating_sub(piece.start))
        };
        if !self.rules.is_empty() {
            let no_spans = crate::json::Spans::default();
            let mut report = Report {
                rule: self.rules[0],
                tool: Some(Arc::clone(name)),
                spans: &no_spans,
                diagnostics: Vec::new(),
                with_edits: false,
            };
            let named = NamedTool {
                name,
                skeleton: outcome.skeleton.as_deref(),
                pointer: &outcome.pointer,
                name_offset,
            };
            for rule in self.rules {
                if let Check::Name(check) = rule.check {
                    report.rule = rule;
                    check(&named, &self.earlier, &mut report);
                }
            }
            if !report.diagnostics.is_empty() {
                for d in &mut report.diagnostics {
                    d.position = position(d.offset);
                }
                outcome.diagnostics.append(&mut report.diagnostics);
                outcome.diagnostics.sort_by(in_file_order);
            }
        }
        let skeleton = outcome.skeleton.take();
        self.earlier.insert_first(name, skeleton, || EarlierTool {
            // (Cloned: the findings said once per file are told apart by it after this.)
            pointer: outcome.pointer.clone(),
            position: position(name_offset),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A catalog of `n` tools that trips most rules, with repeated names.
    fn catalog(n: usize) -> String {
        let shapes = [
            r#"{"name": "search_N", "description": "Search.", "inputSchema": {"type": "object", "properties": {"q": {"type": "string", "format": "uint32"}, "n": {"type": "integer", "minimum": 5, "maximum": 1}}}}"#,
            r#"{"name": "dup", "inputSchema": {"q": {"type": "string", "required": true}}}"#,
            r#"{"name": "bad name N", "inputSchema": {"type": "array"}, "outputSchema": {"type": "string"}}"#,
            r#"{"name": "ok_N", "description": "Return the time in a given zone.", "inputSchema": {"type": "object", "additionalProperties": false}}"#,
        ];
        let tools: Vec<String> = (0..n)
            .map(|i| shapes[i % shapes.len()].replace('N', &i.to_string()))
            .collect();
        format!("{{\"tools\": [\n{}\n]}}", tools.join(",\n"))
    }

    /// A finding in one line: where, what, and whether it has a fix.
    fn described(d: &Diagnostic) -> String {
        format!(
            "{} {} {} {:?} {} {:?}",
            d.position,
            d.code(),
            d.pointer,
            d.tool,
            d.message,
            d.fix_applicability()
        )
    }

    fn summary(report: &FileReport) -> Vec<String> {
        report.diagnostics.iter().map(described).collect()
    }

    #[test]
    fn positions_are_counted_in_characters_on_any_line_layout() {
        // One line (as a server sends it), lines with several tools, characters of every width.
        let written = catalog(301)
            .replace("Search.", "Sé😀rch.")
            .replace("zone.", "zöne");
        let one_line = written.replace('\n', "");
        let some_lines = written.replacen(",\n", ", ", 150).replace('\n', "\r\n");
        for text in [one_line, some_lines] {
            for threads in [1, 3] {
                let found = Linter::new(RuleSelection::all())
                    .with_threads(threads)
                    .lint("c.json", &text)
                    .unwrap();
                assert!(found.diagnostics.len() > 300);
                for d in &found.diagnostics {
                    assert_eq!(
                        d.position,
                        crate::json::position_of(&text, d.offset),
                        "{d:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn threads_do_not_change_the_results() {
        let text = catalog(301);
        let one = Linter::new(RuleSelection::all()).with_threads(1);
        let expected = one.lint("c.json", &text).unwrap();
        assert_eq!(expected.tools, 301);
        assert!(expected.diagnostics.iter().any(|d| d.code() == "TOOL-003"));
        for threads in [2, 3, 8] {
            let many = Linter::new(RuleSelection::all()).with_threads(threads);
            let found = many.lint("c.json", &text).unwrap();
            assert_eq!(found.tools, 301);
            assert_eq!(summary(&found), summary(&expected), "{threads} threads");
        }
        // Without edits, the same findings say the same about their fixes.
        let light = Linter::new(RuleSelection::all())
            .with_threads(2)
            .with_edits(false);
        let found = light.lint("c.json", &text).unwrap();
        assert_eq!(summary(&found), summary(&expected));
        assert!(found
            .diagnostics
            .iter()
            .all(|d| d.fix.as_ref().is_none_or(|f| f.edits.is_empty())));
        assert!(expected
            .diagnostics
            .iter()
            .all(|d| d.fix.as_ref().is_none_or(|f| !f.edits.is_empty())));
    }

    #[test]
    fn a_panic_while_handing_on_reaches_the_caller() {
        let text = catalog(301);
        let (done, finished) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let linter = Linter::new(RuleSelection::all()).with_threads(3);
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                linter.lint_each("c.json", &text, |_| panic!("the printer failed"))
            }));
            let _ = done.send(result.is_err());
        });
        // No thread is left waiting: the panic comes back instead of a hang.
        let panicked = finished.recv_timeout(std::time::Duration::from_secs(60));
        assert_eq!(panicked, Ok(true));
    }

    /// What linting `text` hands on: each finding (with its offset) and the tools, or the error.
    type Handed = (Vec<String>, Result<Option<usize>, String>);

    fn handed_line(d: &Diagnostic) -> String {
        format!("{} {}", d.offset, described(d))
    }

    /// Lint `text` as a file read a piece at a time (from memory), checking that each finding
    /// comes with a piece of the text that holds the margin around it.
    fn lint_in_pieces(linter: &Linter, text: &str) -> Handed {
        let mut found = Vec::new();
        let result = linter.lint_source_each("c.json", &text.as_bytes(), |diagnostics, piece| {
            assert_eq!(
                piece.text,
                &text[piece.start..piece.start + piece.text.len()]
            );
            for d in diagnostics {
                let reach = PIECE_MARGIN - 3;
                assert!(piece.start <= d.offset.saturating_sub(reach), "{d:?}");
                assert!(piece.start + piece.text.len() >= (d.offset + reach).min(text.len()));
                found.push(handed_line(d));
            }
        });
        (found, result.map_err(|e| e.to_string()))
    }

    fn lint_whole(linter: &Linter, text: &str) -> Handed {
        let mut found = Vec::new();
        let result = linter.lint_each("c.json", text, |diagnostics| {
            found.extend(diagnostics.iter().map(handed_line));
        });
        (found, result.map(Some).map_err(|e| e.to_string()))
    }

    /// A catalog in one of the shapes read in pieces, from tools of every kind in `kinds`, laid
    /// out as `layout` says, maybe after a byte order mark.
    fn shaped_catalog(kinds: &[usize], layout: usize, wrapper: usize, bom: bool) -> String {
        let long = format!(
            r#"{{"name": "long_N", "description": "{}", "inputSchema": {{"type": "object"}}}}"#,
            "Wörds 😀 and more. ".repeat(40)
        );
        let mut shapes: Vec<String> = catalog(4)
            .lines()
            .filter(|l| l.starts_with('{') && l.contains("name"))
            .map(|l| {
                l.trim_end_matches(',')
                    .replace("_0", "_N")
                    .replace("_3", "_N")
            })
            .collect();
        shapes.push(r#"{"name": "dup", "description": "Sé😀rch\u00e9 \"q\"", "inputSchema": {"type": "object", "properties": {"a": {"enum": [1, 2.5e3, [[[]]], null]}}}}"#.into());
        shapes.push(long);
        let tools: Vec<String> = kinds
            .iter()
            .enumerate()
            .map(|(i, kind)| shapes[kind % shapes.len()].replace('N', &i.to_string()))
            .collect();
        let (separator, newline) = match layout {
            0 => (",\n  ", "\n"),
            1 => (",", ""),
            2 => (",\r\n", "\r\n"),
            _ => (", ", "\n"),
        };
        let list = format!("[{newline}{}{newline}]", tools.join(separator));
        let text = match wrapper {
            0 => format!("{{\"tools\": {list}}}"),
            1 => format!(
                "{{\"jsonrpc\": \"2.0\", \"id\": 7, \"result\": {{\"tools\": {list},{newline} \"nextCursor\": \"next\"}}}}"
            ),
            2 => list,
            _ => format!(
                "{{\"_meta\": {{\"big\": [1, 2, {{\"a\": \"é\"}}]}},{newline} \"tools\": {list}, \"x\": 1e5}}  {newline}"
            ),
        };
        if bom {
            format!("\u{feff}{text}")
        } else {
            text
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(96))]

        /// Read in pieces, a file gives what its whole text gives: the same findings at the same
        /// places, the same errors, or (for what only the whole text can say) nothing at all.
        #[test]
        fn lint_in_pieces_hands_on_what_the_whole_text_does(
            kinds in proptest::collection::vec(0usize..8, 0..160),
            layout in 0usize..4,
            wrapper in 0usize..4,
            bom: bool,
            block in 16usize..600,
            threads in 1usize..4,
            damage in 0usize..4,
            at in 0.0f64..1.0,
        ) {
            let mut text = shaped_catalog(&kinds, layout, wrapper, bom);
            let mut cut = ((text.len() as f64 * at) as usize).min(text.len());
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            match damage {
                1 => text.truncate(cut),
                2 => text.insert(cut, '}'),
                3 => text = text.replacen("\"name\": ", "\"name\": 1, \"name\": ", 1 + cut % 3),
                _ => {}
            }
            let mut linter = Linter::new(RuleSelection::all())
                .with_threads(threads)
                .with_edits(false);
            linter.block = block;
            let whole = lint_whole(&linter, &text);
            let (found, result) = lint_in_pieces(&linter, &text);
            match (&whole.1, &result) {
                // Only what the whole text must say is left to it, and then nothing was handed on.
                (Err(_), Ok(None)) => proptest::prop_assert!(found.is_empty()),
                _ => proptest::prop_assert_eq!((found, result), whole),
            }
        }
    }

    /// A file in memory that counts its reads.
    struct CountedReads {
        bytes: Vec<u8>,
        reads: std::sync::atomic::AtomicUsize,
    }

    impl ByteSource for CountedReads {
        fn byte_len(&self) -> usize {
            self.bytes.len()
        }

        fn read_exact_at(&self, buf: &mut [u8], offset: usize) -> std::io::Result<()> {
            self.reads.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            (&self.bytes.as_slice()).read_exact_at(buf, offset)
        }
    }

    #[test]
    fn helpers_lint_no_further_ahead_of_a_slow_hand_on_than_a_bound() {
        // Many tiny tools whose findings are handed on slowly (as a slow terminal takes them):
        // the chunks linted but not handed on stay within AHEAD (plus one in each thread's hands),
        // instead of the whole file's results piling up.
        let tools = parallel::CHUNK * (parallel::AHEAD * 4);
        let text = format!("{{\"tools\": [{}]}}", vec!["{}"; tools].join(","));
        let source = CountedReads {
            bytes: text.into_bytes(),
            reads: Default::default(),
        };
        let threads = 3;
        let mut linter = Linter::new(RuleSelection::all())
            .with_threads(threads)
            .with_edits(false);
        // The scan reads the file in one block; every other read is a chunk's.
        linter.block = source.bytes.len();
        let (mut handed, mut most_ahead) = (0, 0);
        let result = linter.lint_source_each("c.json", &source, |_, _| {
            let reads = source.reads.load(std::sync::atomic::Ordering::SeqCst);
            let chunks_read = reads - 1;
            most_ahead = most_ahead.max(chunks_read.saturating_sub(handed / parallel::CHUNK));
            handed += 1;
            std::thread::sleep(std::time::Duration::from_micros(100));
        });
        assert_eq!(result, Ok(Some(tools)));
        assert!(most_ahead > 1, "the helpers never ran ahead: {most_ahead}");
        assert!(
            most_ahead <= parallel::AHEAD + threads,
            "{most_ahead} chunks were linted ahead of the hand-on"
        );
    }

    #[test]
    fn a_linter_that_builds_edits_reads_the_whole_text() {
        let text = catalog(5);
        let linter = Linter::new(RuleSelection::all());
        let mut handed = 0;
        let result = linter.lint_source_each("c.json", &text.as_bytes(), |_, _| handed += 1);
        assert_eq!((result, handed), (Ok(None), 0));
        let one_tool = r#"{"name": "t", "inputSchema": {"type": "object"}}"#;
        let result =
            linter
                .with_edits(false)
                .lint_source_each("c.json", &one_tool.as_bytes(), |_, _| handed += 1);
        assert_eq!((result, handed), (Ok(None), 0));
    }

    #[test]
    fn errors_stop_every_thread_count_the_same_way() {
        let mut broken = catalog(300);
        broken.truncate(broken.len() - 2);
        let mut duplicate_key = catalog(300);
        duplicate_key = duplicate_key.replacen(
            "\"name\": \"ok_203\"",
            "\"name\": \"ok_203\", \"name\": \"x\"",
            1,
        );
        for threads in [1, 2, 4] {
            let linter = Linter::new(RuleSelection::all()).with_threads(threads);
            let mut handed = 0;
            let err = linter
                .lint_each("c.json", &broken, |_| handed += 1)
                .unwrap_err();
            assert_eq!(handed, 0, "{threads}");
            assert_eq!(
                err.to_string(),
                "c.json:302:1: invalid JSON: unexpected end of input: expected ',' or ']' after an array element"
            );
            let err = linter.lint("c.json", &duplicate_key).unwrap_err();
            assert_eq!(
                err.to_string(),
                "c.json:205:20: invalid JSON: duplicate key 'name' in an object"
            );
        }
    }
}
