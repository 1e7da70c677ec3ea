//! Snapshot tests for the rules: a fixture catalog in, the rule's findings and fixes out.
//!
//! Each rule's test lints its fixture with that rule alone and compares the result with
//! `rules/snapshots/CODE.snap`: one line per finding, then the safe fixes and the unsafe ones as
//! diffs. The harness also checks that fixing a fixed file changes nothing. Every provider profile
//! is a target, so the `COMPAT-*` snapshots show what each provider does.

use super::{registry, Linter, RuleSelection};
use std::fmt::Write;

/// One line per finding: `line:column CODE severity [tool] message (fix) @ pointer`.
pub(crate) fn render(report: &super::FileReport) -> String {
    let mut out = String::new();
    for d in &report.diagnostics {
        let fix = d
            .fix_applicability()
            .map(|a| format!(" ({a} fix)"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "{}:{} {} {} [{}] {}{fix} @ {}",
            d.position.line,
            d.position.column,
            d.code(),
            d.severity(),
            d.tool.as_deref().unwrap_or("-"),
            d.message,
            d.pointer
        );
    }
    out
}

fn diff(before: &str, after: &str) -> String {
    similar::TextDiff::from_lines(before, after)
        .unified_diff()
        .context_radius(2)
        .header("fixture", "fixed")
        .to_string()
}

/// The folder of the rules' fixtures, each named by its rule's code (`SCH-002.json`).
fn fixtures_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lint/rules/fixtures")
}

/// Lint the fixture `rules/fixtures/CODE.json` with `rule` alone and compare with its snapshot.
pub(crate) fn assert_fixture(rule: &super::Rule) {
    let path = fixtures_dir().join(format!("{}.json", rule.code()));
    let fixture = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: every rule needs a fixture catalog at {} ({e})",
            rule.code(),
            path.display()
        )
    });
    let title = format!("{} {} ({})", rule.code(), rule.name(), rule.severity());
    assert_selection(rule.code(), &title, &[rule.code()], &fixture);
}

/// A fixture whose name is no rule's code would never be linted.
#[test]
fn every_fixture_names_a_rule() {
    for entry in std::fs::read_dir(fixtures_dir()).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        let stem = name.strip_suffix(".json").unwrap_or(&name);
        assert!(
            ["mcptest-mistakes", "translated-lightweight"].contains(&stem)
                || registry::rule(stem).is_ok(),
            "fixture {name} names no rule"
        );
    }
}

/// Lint `fixture` with the rules `selectors` name and compare with the snapshot `name`.
pub(crate) fn assert_selection(name: &str, title: &str, selectors: &[&str], fixture: &str) {
    let mut selection = RuleSelection::none();
    let selectors: Vec<String> = selectors.iter().map(|s| s.to_string()).collect();
    selection.apply(Some(&selectors), &[]).unwrap();
    // Every provider is a target: the COMPAT rules show what each of them does.
    let linter = Linter::new(selection).with_targets(crate::adapt::PROFILES.to_vec());
    let report = linter.lint("fixture.json", fixture).unwrap();
    assert!(
        !report.diagnostics.is_empty(),
        "{name}: the fixture finds nothing"
    );
    let code = name;
    let mut out = format!("{title}\n\n");
    out.push_str(&render(&report));
    let mut previous = String::new();
    for (label, unsafe_fixes) in [("safe fixes", false), ("with --unsafe-fixes", true)] {
        let fixed = linter.fix("fixture.json", fixture, unsafe_fixes).unwrap();
        let again = linter
            .fix("fixture.json", &fixed.text, unsafe_fixes)
            .unwrap();
        assert_eq!(
            again.text, fixed.text,
            "{code}: fixing a fixed file changed it"
        );
        if fixed.fixed > 0 && fixed.text != previous {
            let _ = write!(
                out,
                "\n{label}: {} fixed\n{}",
                fixed.fixed,
                diff(fixture, &fixed.text)
            );
            if !fixed.remaining.diagnostics.is_empty() {
                let _ = write!(out, "left after fixing:\n{}", render(&fixed.remaining));
            }
        }
        previous = fixed.text;
    }
    insta::with_settings!({
        snapshot_path => "rules/snapshots",
        prepend_module_to_snapshot => false,
        omit_expression => true,
    }, {
        insta::assert_snapshot!(name, out);
    });
}

/// Each mistake mcptest's schema-lint makes on real catalogs, and what toolschema does instead.
#[test]
fn mcptest_mistakes() {
    assert_selection(
        "mcptest-mistakes",
        "SCH-001 to SCH-004 where mcptest errs: nested objects and array items are checked; $ref, \
         const and anyOf properties are typed; type lists admit strings; enum strings need no \
         maxLength; fixes keep the key order",
        &["SCH-001", "SCH-002", "SCH-003", "SCH-004"],
        include_str!("rules/fixtures/mcptest-mistakes.json"),
    );
}

/// Lightweight shapes are linted through their standard translation, with positions and
/// pointers in the text as written; only the translation itself is offered as a fix, and the
/// findings left after it point into the translated text.
#[test]
fn translated_lightweight() {
    assert_selection(
        "translated-lightweight",
        "every rule on lightweight shapes: findings of the translation at the written text",
        &["ALL"],
        include_str!("rules/fixtures/translated-lightweight.json"),
    );
}
