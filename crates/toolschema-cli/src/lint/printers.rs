//! The output formats of `toolschema lint`: text like a compiler, one JSON document, SARIF 2.1.0,
//! and GitHub workflow annotations.

use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::{self, Write};
use toolschema::json::Position;
use toolschema::lint::{
    Applicability, Diagnostic, LintSettings, Rule, Severity, TextPiece, PIECE_MARGIN,
};
use toolschema::text::{count, hidden_kind, is_printable_ascii, steers_terminal, terminal_safe};

/// How findings are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// `file:line:col: CODE severity: message`, the tool and the source line.
    Text,
    /// `{"diagnostics": [...], "summary": {...}}`.
    Json,
    /// SARIF 2.1.0, for code scanning.
    Sarif,
    /// GitHub Actions workflow commands (`::warning file=...::message`).
    Github,
}

/// A file that could not be linted: unreadable, not JSON, not a catalog.
#[derive(Debug, Clone)]
pub struct FileError {
    /// The file, as named on the command line.
    pub file: String,
    /// Where in the file, when known.
    pub position: Option<Position>,
    /// What is wrong.
    pub message: String,
}

/// How findings are shown, besides the format.
#[derive(Debug, Clone, Copy, Default)]
pub struct Style {
    /// ANSI colours (text format).
    pub color: bool,
    /// Each fix's title next to its finding.
    pub show_fixes: bool,
    /// Counts per rule instead of each finding.
    pub statistics: bool,
    /// No summary line.
    pub quiet: bool,
}

/// Counts over a run.
#[derive(Debug, Default)]
pub struct Summary {
    /// Files that could not be linted.
    pub errors: usize,
    pub files: usize,
    pub tools: usize,
    pub critical: usize,
    pub warning: usize,
    pub info: usize,
    /// Findings a safe fix would resolve.
    pub safe_fixes: usize,
    /// Findings only an unsafe fix would resolve.
    pub unsafe_fixes: usize,
    /// Findings fixed (with --fix or --write), or that would be (with --diff).
    pub fixed: usize,
    /// Whether the fixes were only shown (--diff), not applied.
    pub dry_run: bool,
}

impl Summary {
    pub fn count(&mut self, d: &Diagnostic) {
        match d.severity() {
            Severity::Critical => self.critical += 1,
            Severity::Warning => self.warning += 1,
            Severity::Info => self.info += 1,
        }
        match d.fix_applicability() {
            Some(Applicability::Safe) => self.safe_fixes += 1,
            Some(Applicability::Unsafe) => self.unsafe_fixes += 1,
            None => {}
        }
    }

    /// Findings at or above `severity`.
    pub fn at_or_above(&self, severity: Severity) -> usize {
        match severity {
            Severity::Critical => self.critical,
            Severity::Warning => self.critical + self.warning,
            Severity::Info => self.critical + self.warning + self.info,
        }
    }

    fn problems(&self) -> usize {
        self.critical + self.warning + self.info
    }

    /// The sentence about files that could not be linted, if any.
    fn errors_sentence(&self) -> String {
        match self.errors {
            0 => String::new(),
            1 => " 1 file could not be linted.".into(),
            n => format!(" {n} files could not be linted."),
        }
    }

    /// One line for people: what was found, how much is fixable.
    fn line(&self) -> String {
        let scope = format!(
            "{} in {}",
            count(self.tools, "tool", "tools"),
            count(self.files, "file", "files")
        );
        let mut out = String::new();
        if self.fixed > 0 {
            out.push_str(&format!(
                "{} {}. ",
                if self.dry_run { "Would fix" } else { "Fixed" },
                count(self.fixed, "problem", "problems")
            ));
        }
        if self.problems() == 0 {
            out.push_str(&format!("No problems in {scope}."));
            out.push_str(&self.errors_sentence());
            return out;
        }
        out.push_str(&format!(
            "Found {} in {scope}: {} critical, {}, {} info.",
            count(self.problems(), "problem", "problems"),
            self.critical,
            count(self.warning, "warning", "warnings"),
            self.info
        ));
        if self.safe_fixes > 0 {
            out.push_str(&format!(" {} fixable with --fix", self.safe_fixes));
            if self.unsafe_fixes > 0 {
                out.push_str(&format!(", {} more with --unsafe-fixes", self.unsafe_fixes));
            }
            out.push('.');
        } else if self.unsafe_fixes > 0 {
            out.push_str(&format!(
                " {} fixable with --fix --unsafe-fixes.",
                self.unsafe_fixes
            ));
        }
        out.push_str(&self.errors_sentence());
        out
    }
}

/// Findings per rule, for `--statistics`: the rule, how many, how many a safe fix resolves.
type Statistics = BTreeMap<&'static str, (&'static Rule, usize, usize)>;

/// Prints findings as they come, in one format.
pub struct Printer<'w> {
    format: Format,
    style: Style,
    out: &'w mut dyn Write,
    rules: Vec<&'static Rule>,
    /// Whether a JSON diagnostic or SARIF result was written (for the commas between them).
    wrote_one: bool,
    /// A text finding, built here and written at once (one call to the writer instead of one
    /// per piece).
    buffer: String,
    /// Files that could not be linted, for the formats that list them at the end.
    errors: Vec<FileError>,
    statistics: Statistics,
}

impl<'w> Printer<'w> {
    pub fn new(
        format: Format,
        style: Style,
        settings: &LintSettings,
        out: &'w mut dyn Write,
    ) -> Self {
        Printer {
            format,
            style,
            out,
            rules: settings.selection.rules().collect(),
            wrote_one: false,
            buffer: String::new(),
            errors: Vec::new(),
            statistics: BTreeMap::new(),
        }
    }

    /// Report a file that could not be linted.
    pub fn error(&mut self, error: FileError) -> io::Result<()> {
        let (line, column) = error
            .position
            .map_or((None, None), |p| (Some(p.line), Some(p.column)));
        match self.format {
            Format::Text => {
                let place = match error.position {
                    Some(p) => format!("{}:{}:{}", error.file, p.line, p.column),
                    None => error.file.clone(),
                };
                let label = paint(self.style.color, RED_BOLD, "error");
                writeln!(
                    self.out,
                    "{}: {label}: {}",
                    paint(self.style.color, BOLD, &terminal_safe(&place)),
                    terminal_safe(&error.message)
                )?;
            }
            Format::Github => {
                let mut properties = format!("file={}", escape_property(&error.file));
                if let (Some(line), Some(column)) = (line, column) {
                    properties.push_str(&format!(",line={line},col={column}"));
                }
                writeln!(
                    self.out,
                    "::error {properties},title=toolschema::{}",
                    escape_data(&error.message)
                )?;
            }
            Format::Sarif if !self.style.statistics => {
                let mut region = json!({});
                if let (Some(line), Some(column)) = (line, column) {
                    region = json!({"startLine": line, "startColumn": column});
                }
                let result = json!({
                    "ruleId": "input-error",
                    "level": "error",
                    "kind": "fail",
                    "message": {"text": error.message},
                    "locations": [{"physicalLocation": {
                        "artifactLocation": {"uri": artifact_uri(&error.file)},
                        "region": region
                    }}]
                });
                let comma = if self.wrote_one { "," } else { "" };
                self.wrote_one = true;
                write!(self.out, "{comma}\n{result}")?;
            }
            Format::Json | Format::Sarif => {}
        }
        self.errors.push(error);
        Ok(())
    }

    pub fn begin(&mut self) -> io::Result<()> {
        if self.style.statistics {
            return Ok(());
        }
        match self.format {
            Format::Json => write!(self.out, "{{\"diagnostics\": ["),
            Format::Sarif => {
                let rules: Vec<Value> = self.rules.iter().map(|r| sarif_rule(r)).collect();
                let driver = json!({
                    "name": "toolschema",
                    "semanticVersion": env!("CARGO_PKG_VERSION"),
                    "rules": rules,
                });
                write!(
                    self.out,
                    "{{\"$schema\": \"https://json.schemastore.org/sarif-2.1.0.json\", \"version\": \"2.1.0\", \"runs\": [{{\n\"tool\": {{\"driver\": {driver}}},\n\"columnKind\": \"unicodeCodePoints\",\n\"results\": ["
                )
            }
            Format::Text | Format::Github => Ok(()),
        }
    }

    /// Print a finding; `text` holds the file's text around it.
    pub fn diagnostic(
        &mut self,
        file: &str,
        text: TextPiece<'_>,
        d: &Diagnostic,
    ) -> io::Result<()> {
        if self.style.statistics {
            let entry = self.statistics.entry(d.code()).or_insert((d.rule, 0, 0));
            entry.1 += 1;
            entry.2 += usize::from(d.fix_applicability() == Some(Applicability::Safe));
            return Ok(());
        }
        match self.format {
            Format::Text => {
                self.buffer.clear();
                push_text(&mut self.buffer, file, text, d, self.style);
                self.out.write_all(self.buffer.as_bytes())
            }
            Format::Json => {
                // Written field by field: building a Value per finding costs more than the rest.
                let comma = if self.wrote_one { "," } else { "" };
                self.wrote_one = true;
                write!(
                    self.out,
                    "{comma}\n  {{\"code\":\"{}\",\"severity\":\"{}\",\"file\":{},\"tool\":{},\"pointer\":{},\"line\":{},\"column\":{},\"message\":{},\"fix\":{}}}",
                    d.code(),
                    d.severity(),
                    JsonText(file),
                    OptionalJsonText(d.tool.as_deref()),
                    JsonText(&d.pointer),
                    d.position.line,
                    d.position.column,
                    JsonText(&d.message),
                    OptionalJsonText(d.fix_applicability().map(Applicability::as_str)),
                )
            }
            Format::Sarif => {
                let result = self.sarif_result(file, d);
                let comma = if self.wrote_one { "," } else { "" };
                self.wrote_one = true;
                write!(self.out, "{comma}\n{result}")
            }
            Format::Github => {
                let level = match d.severity() {
                    Severity::Critical => "error",
                    Severity::Warning => "warning",
                    Severity::Info => "notice",
                };
                let mut message = message_with_tool(d);
                if let Some(fix) = d.fix.as_ref().filter(|_| self.style.show_fixes) {
                    message.push_str(&format!(" [fix ({}): {}]", fix.applicability, fix.title));
                }
                writeln!(
                    self.out,
                    "::{level} file={},line={},col={},title={}::{}",
                    escape_property(file),
                    d.position.line,
                    d.position.column,
                    escape_property(&format!("{} {}", d.code(), d.rule.name())),
                    escape_data(&message)
                )
            }
        }
    }

    pub fn end(&mut self, summary: &Summary) -> io::Result<()> {
        let totals = json!({
            "files": summary.files,
            "tools": summary.tools,
            "critical": summary.critical,
            "warning": summary.warning,
            "info": summary.info,
            "errors": summary.errors,
        });
        let errors: Vec<Value> = self
            .errors
            .iter()
            .map(|e| {
                json!({
                    "file": e.file,
                    "line": e.position.map(|p| p.line),
                    "column": e.position.map(|p| p.column),
                    "message": e.message,
                })
            })
            .collect();
        if self.style.statistics {
            let mut rows: Vec<(&'static Rule, usize, usize)> =
                self.statistics.values().copied().collect();
            // Most findings first, like ruff's --statistics.
            rows.sort_by_key(|(rule, count, _)| (std::cmp::Reverse(*count), rule.code()));
            match self.format {
                Format::Json => {
                    let rows: Vec<Value> = rows
                        .iter()
                        .map(|(rule, count, fixable)| {
                            json!({"code": rule.code(), "name": rule.name(), "count": count, "fixable": fixable})
                        })
                        .collect();
                    let document = json!({"statistics": rows, "errors": errors, "summary": totals});
                    writeln!(self.out, "{document}")?;
                }
                _ => {
                    // Codes differ in length (SCH-002, TOOL-002): pad them so the names line up;
                    // the padding stays outside the colour codes.
                    let width = rows.iter().map(|(rule, ..)| rule.code().len()).max();
                    let width = width.unwrap_or(0);
                    for (rule, count, fixable) in rows {
                        let mark = if fixable > 0 { "[*]" } else { "   " };
                        let code = rule.code();
                        let pad = " ".repeat(width - code.len());
                        writeln!(
                            self.out,
                            "{count:>6}  {}{pad}  {mark}  {}",
                            paint(self.style.color, BOLD, code),
                            rule.name()
                        )?;
                    }
                    if !self.style.quiet {
                        writeln!(self.out, "{}", summary.line())?;
                    }
                }
            }
            return self.out.flush();
        }
        match self.format {
            Format::Text | Format::Github if self.style.quiet => Ok(()),
            Format::Text | Format::Github => writeln!(self.out, "{}", summary.line()),
            Format::Json => {
                let errors = Value::Array(errors);
                writeln!(
                    self.out,
                    "\n],\n\"errors\": {errors},\n\"summary\": {totals}}}"
                )
            }
            Format::Sarif => {
                let notifications: Vec<Value> = self
                    .errors
                    .iter()
                    .map(|e| {
                        let mut region = json!({});
                        if let Some(p) = e.position {
                            region = json!({"startLine": p.line, "startColumn": p.column});
                        }
                        json!({
                            "level": "error",
                            "message": {"text": e.message},
                            "locations": [{"physicalLocation": {
                                "artifactLocation": {"uri": artifact_uri(&e.file)},
                                "region": region
                            }}]
                        })
                    })
                    .collect();
                let invocation = json!({
                    "executionSuccessful": self.errors.is_empty(),
                    "toolExecutionNotifications": notifications,
                });
                writeln!(self.out, "\n],\n\"invocations\": [{invocation}]\n}}]}}")
            }
        }?;
        self.out.flush()
    }

    fn sarif_result(&self, file: &str, d: &Diagnostic) -> Value {
        let level = match d.severity() {
            Severity::Critical => "error",
            Severity::Warning => "warning",
            Severity::Info => "note",
        };
        let index = self.rules.iter().position(|r| r.code() == d.code());
        let mut result = json!({
            "ruleId": d.code(),
            "level": level,
            "message": {"text": message_with_tool(d)},
            "locations": [{
                "physicalLocation": {
                    "artifactLocation": {"uri": artifact_uri(file)},
                    "region": {"startLine": d.position.line, "startColumn": d.position.column}
                },
                "logicalLocations": [{"fullyQualifiedName": d.pointer, "kind": "member"}]
            }],
            "properties": {"tool": d.tool.as_deref(), "pointer": d.pointer, "fix": d.fix_applicability().map(Applicability::as_str)}
        });
        if let (Some(index), Value::Object(map)) = (index, &mut result) {
            map.insert("ruleIndex".into(), json!(index));
        }
        result
    }
}

/// A string written as a JSON string.
struct JsonText<'a>(&'a str);

impl std::fmt::Display for JsonText<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let plain = self.0.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\');
        if plain {
            write!(f, "\"{}\"", self.0)
        } else {
            f.write_str(&Value::from(self.0).to_string())
        }
    }
}

/// A string written as a JSON string, or `null`.
struct OptionalJsonText<'a>(Option<&'a str>);

impl std::fmt::Display for OptionalJsonText<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(text) => JsonText(text).fmt(f),
            None => f.write_str("null"),
        }
    }
}

fn sarif_rule(rule: &Rule) -> Value {
    let level = match rule.severity() {
        Severity::Critical => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    };
    let documentation = rule.documentation();
    json!({
        "id": rule.code(),
        "name": rule.name(),
        "shortDescription": {"text": rule.summary()},
        "fullDescription": {"text": rule.summary()},
        "help": {"text": documentation, "markdown": documentation},
        "defaultConfiguration": {"level": level},
    })
}

/// A relative path as a URI reference: forward slashes, reserved characters escaped.
fn artifact_uri(file: &str) -> String {
    let mut out = String::with_capacity(file.len());
    for c in file.chars() {
        match c {
            '\\' => out.push('/'),
            c if c.is_ascii_alphanumeric() || "-._~/:@!$&'()*+,;=".contains(c) => out.push(c),
            c => {
                let mut buffer = [0u8; 4];
                for byte in c.encode_utf8(&mut buffer).bytes() {
                    out.push_str(&format!("%{byte:02X}"));
                }
            }
        }
    }
    out
}

fn message_with_tool(d: &Diagnostic) -> String {
    let message = match &d.tool {
        Some(tool) => format!("{} (tool '{tool}')", d.message),
        None => d.message.clone(),
    };
    terminal_safe(&message).into_owned()
}

/// Escape the message of a workflow command (and what would steer a terminal showing the log).
fn escape_data(text: &str) -> String {
    terminal_safe(text)
        .replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escape a property of a workflow command.
fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

/// Widest part of a source line shown before and after the column.
const BEFORE: usize = 40;
const AFTER: usize = 60;

// A snippet looks at a window around its offset (four bytes a character, and a character cut
// at either end), which the piece of text a finding comes with must hold.
const _: () = assert!((BEFORE + 1) * 4 + 3 < PIECE_MARGIN - 3);
const _: () = assert!((AFTER + 1) * 4 + 3 < PIECE_MARGIN - 3);

/// A finding as text: `file:line:col: CODE severity: message (tool 'name') [fix: safe]`, then the
/// source line and a caret under the column.
fn push_text(out: &mut String, file: &str, text: TextPiece<'_>, d: &Diagnostic, style: Style) {
    let color = style.color;
    if color {
        out.push_str(BOLD);
    }
    out.push_str(&terminal_safe(file));
    out.push(':');
    push_number(out, d.position.line);
    out.push(':');
    push_number(out, d.position.column);
    if color {
        out.push_str(RESET);
    }
    out.push_str(": ");
    if color {
        out.push_str(BOLD);
    }
    out.push_str(d.code());
    if color {
        out.push_str(RESET);
    }
    out.push(' ');
    let severity = d.severity().as_str();
    if color {
        let tint = match d.severity() {
            Severity::Critical => RED_BOLD,
            Severity::Warning => YELLOW_BOLD,
            Severity::Info => CYAN_BOLD,
        };
        out.push_str(&paint(true, tint, severity));
    } else {
        out.push_str(severity);
    }
    out.push_str(": ");
    out.push_str(&terminal_safe(&d.message));
    if let Some(tool) = &d.tool {
        out.push_str(" (tool '");
        out.push_str(&terminal_safe(tool));
        out.push_str("')");
    }
    match &d.fix {
        Some(fix) if style.show_fixes => {
            out.push_str(" [fix (");
            out.push_str(fix.applicability.as_str());
            out.push_str("): ");
            out.push_str(&terminal_safe(&fix.title));
            out.push_str("]\n");
        }
        _ => out.push_str(match d.fix_applicability() {
            Some(Applicability::Safe) => " [fix: safe]\n",
            Some(Applicability::Unsafe) => " [fix: unsafe]\n",
            None => "\n",
        }),
    }
    let snippet = Snippet::new(text, d.offset);
    out.push(' ');
    let number_start = out.len();
    push_number(out, d.position.line);
    let width = out.len() - number_start;
    out.push_str(" | ");
    snippet.push_to(out);
    out.push_str("\n ");
    push_spaces(out, width);
    out.push_str(" | ");
    push_spaces(out, snippet.caret);
    if color {
        out.push_str(&paint(true, CYAN_BOLD, "^"));
        out.push('\n');
    } else {
        out.push_str("^\n");
    }
}

const RESET: &str = "\x1b[0m";
const BOLD: &str = "\x1b[1m";
const RED_BOLD: &str = "\x1b[1;31m";
const YELLOW_BOLD: &str = "\x1b[1;33m";
const CYAN_BOLD: &str = "\x1b[1;36m";

/// `text` in an ANSI style, when colour is on.
fn paint(color: bool, style: &str, text: &str) -> String {
    if color {
        format!("{style}{text}{RESET}")
    } else {
        text.to_string()
    }
}

/// Append `n` in decimal (what `{n}` writes, without the formatting machinery).
fn push_number(out: &mut String, mut n: u32) {
    let mut digits = [0u8; 10];
    let mut start = digits.len();
    loop {
        start -= 1;
        digits[start] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend(digits[start..].iter().map(|&d| char::from(d)));
}

fn push_spaces(out: &mut String, n: usize) {
    out.extend(std::iter::repeat_n(' ', n));
}

/// The source line holding an offset, cut to a window around it.
struct Snippet<'a> {
    cut_before: bool,
    shown: &'a str,
    cut_after: bool,
    /// The caret's column in the shown text (characters, from 0).
    caret: usize,
}

impl<'a> Snippet<'a> {
    /// The snippet at byte `offset` of the file `piece` is part of.
    fn new(piece: TextPiece<'a>, offset: usize) -> Self {
        // The piece holds the window around the offset where the file has it, so its ends are
        // the file's wherever the window reaches them.
        let text = piece.text;
        let offset = offset.saturating_sub(piece.start).min(text.len());
        // Only a window around the offset is looked at, wide enough for the characters shown
        // (four bytes at most each): a minified file is one line of megabytes.
        let mut back = offset.saturating_sub((BEFORE + 1) * 4);
        while !text.is_char_boundary(back) {
            back -= 1;
        }
        let mut ahead = (offset + (AFTER + 1) * 4).min(text.len());
        while !text.is_char_boundary(ahead) {
            ahead += 1;
        }
        let mut start = text[back..offset]
            .rfind('\n')
            .map_or(back, |i| back + i + 1);
        if piece.start + start == 0 {
            // The file's byte order mark is not part of its first line.
            start = toolschema::json::text_start(text).min(offset);
        }
        let line_end = text[offset..ahead].find('\n').map(|i| offset + i);
        let line = match line_end {
            Some(end) => text[start..end].trim_end_matches('\r'),
            None if ahead == text.len() => text[start..].trim_end_matches('\r'),
            // Cut inside the line: what follows is shown up to AFTER characters, and cut.
            None => &text[start..ahead],
        };
        let split = (offset - start).min(line.len());
        let (head, tail) = line.split_at(split);
        let head_chars = head.chars().count();
        let (from, caret) = if head_chars > BEFORE {
            let cut = head
                .char_indices()
                .nth(head_chars - BEFORE)
                .map_or(0, |(i, _)| i);
            (cut, BEFORE + 1)
        } else {
            (0, head_chars)
        };
        let to = tail.char_indices().nth(AFTER).map(|(i, _)| split + i);
        Snippet {
            cut_before: from > 0,
            shown: &line[from..to.unwrap_or(line.len())],
            cut_after: to.is_some(),
            caret,
        }
    }
}

impl Snippet<'_> {
    fn push_to(&self, out: &mut String) {
        if self.cut_before {
            out.push('…');
        }
        // Tabs would shift the caret: show them as one space each. What would steer the
        // terminal, or cannot be seen, shows as U+FFFD, one character each, so the caret stays
        // under its column.
        let replaced = |c: char| steers_terminal(c) || hidden_kind(c).is_some();
        if is_printable_ascii(self.shown) {
            // Most lines: nothing to replace, nothing to look at character by character.
            out.push_str(self.shown);
        } else if self.shown.contains('\t') || self.shown.chars().any(replaced) {
            out.extend(self.shown.chars().map(|c| match c {
                '\t' => ' ',
                c if replaced(c) => '\u{FFFD}',
                c => c,
            }));
        } else {
            out.push_str(self.shown);
        }
        if self.cut_after {
            out.push('…');
        }
    }
}

impl std::fmt::Display for Snippet<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut shown = String::new();
        self.push_to(&mut shown);
        f.write_str(&shown)
    }
}

#[cfg(test)]
mod tests {
    use super::{Snippet, TextPiece, AFTER, BEFORE, PIECE_MARGIN};

    #[test]
    fn snippets_look_at_a_window_but_show_what_the_whole_line_gives() {
        // The snippet as read from the whole line (what it was before the window), to compare.
        fn from_whole_line(text: &str, offset: usize) -> (String, usize) {
            let start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
            let end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
            let line = text[start..end].trim_end_matches('\r');
            let chars: Vec<char> = line.chars().collect();
            let head = line[..(offset - start).min(line.len())].chars().count();
            let from = head.saturating_sub(BEFORE);
            let to = (head + AFTER).min(chars.len());
            let mut shown = String::new();
            if from > 0 {
                shown.push('…');
            }
            shown.extend(&chars[from..to]);
            if to < chars.len() {
                shown.push('…');
            }
            (shown, if from > 0 { BEFORE + 1 } else { head })
        }
        let pieces = [
            "a",
            "é",
            "😀",
            "\r",
            "\n",
            "\r\n",
            "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
        ];
        let mut state = 7u64;
        for _ in 0..300 {
            let mut text = String::new();
            for _ in 0..(state % 90) {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                text.push_str(pieces[(state >> 33) as usize % pieces.len()]);
            }
            for offset in (0..=text.len()).filter(|&o| text.is_char_boundary(o)) {
                let s = Snippet::new(TextPiece::whole(&text), offset);
                let cut = |yes: bool| if yes { "…" } else { "" };
                let raw = format!("{}{}{}", cut(s.cut_before), s.shown, cut(s.cut_after));
                assert_eq!(
                    (raw, s.caret),
                    from_whole_line(&text, offset),
                    "{text:?} at {offset}"
                );
                // A piece of the text holding the margin around the offset shows the same.
                let mut start = offset.saturating_sub(PIECE_MARGIN - 3);
                while !text.is_char_boundary(start) {
                    start += 1;
                }
                let mut end = (offset + PIECE_MARGIN - 3).min(text.len());
                while !text.is_char_boundary(end) {
                    end -= 1;
                }
                let piece = TextPiece {
                    start,
                    text: &text[start..end],
                };
                let p = Snippet::new(piece, offset);
                assert_eq!(
                    (p.cut_before, p.shown, p.cut_after, p.caret),
                    (s.cut_before, s.shown, s.cut_after, s.caret),
                    "{text:?} at {offset}, from {start}"
                );
            }
        }
        // A line of ten megabytes costs a window per snippet.
        let minified = "x".repeat(10 << 20);
        for offset in (0..minified.len()).step_by(1 << 12) {
            assert!(
                Snippet::new(TextPiece::whole(&minified), offset)
                    .shown
                    .len()
                    <= BEFORE + AFTER
            );
        }
    }

    #[test]
    fn snippets_cut_long_lines_and_keep_the_caret_under_the_offset() {
        let text = "a\n\t\"é\": 1\nlast";
        let s = Snippet::new(TextPiece::whole(text), text.find("1").unwrap());
        assert_eq!((s.to_string().as_str(), s.caret), (" \"é\": 1", 6));
        let long = format!("{}X{}", "é".repeat(50), "b".repeat(70));
        let s = Snippet::new(TextPiece::whole(&long), long.find('X').unwrap());
        let shown = s.to_string();
        assert_eq!(s.caret, 41);
        assert_eq!(shown.chars().nth(s.caret), Some('X'));
        assert!(shown.starts_with('…') && shown.ends_with('…'));
        assert_eq!(shown.chars().count(), 1 + 40 + 60 + 1);
        let s = Snippet::new(TextPiece::whole("x\r\n"), 0);
        assert_eq!((s.to_string().as_str(), s.caret), ("x", 0));
    }
}
