//! Lint on the six real servers' catalogs: the counts of the precision table in the rules' module
//! docs (`src/lint/rules/mod.rs`), and what the default rule set finds there, before and after
//! the safe fixes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/mod.rs"]
mod support;

use std::collections::BTreeMap;
use toolschema::lint::{Linter, RuleSelection};

/// Findings per rule code.
fn counts(selection: RuleSelection, text: &str) -> BTreeMap<&'static str, usize> {
    let report = Linter::new(selection).lint("catalog.json", text).unwrap();
    let mut counts = BTreeMap::new();
    for d in &report.diagnostics {
        *counts.entry(d.code()).or_insert(0) += 1;
    }
    counts
}

/// The precision table's rows, per server: every rule on, findings per rule.
#[test]
fn every_rule_on_the_real_servers_finds_what_the_table_says() {
    let table: [(&str, &[(&str, usize)]); 6] = [
        (
            "everything",
            &[("DESC-003", 1), ("SCH-002", 13), ("SCH-004", 4)],
        ),
        (
            "filesystem",
            &[("DESC-003", 18), ("SCH-002", 15), ("SCH-004", 21)],
        ),
        (
            "memory",
            &[("DESC-003", 4), ("SCH-002", 14), ("SCH-004", 21)],
        ),
        ("time", &[("SCH-002", 2), ("SCH-004", 4)]),
        (
            "git",
            &[
                ("DESC-002", 1),
                ("DESC-003", 22),
                ("SCH-002", 12),
                ("SCH-004", 24),
            ],
        ),
        ("fetch", &[("SCH-002", 1), ("SCH-004", 1)]),
    ];
    for (server, expected) in table {
        let found = counts(RuleSelection::all(), &support::real_catalog_text(server));
        let expected: BTreeMap<&str, usize> = expected.iter().copied().collect();
        assert_eq!(found, expected, "{server}");
    }
}

/// With the default rule set each server gets only the findings judged right (SCH-002, open
/// objects), and none once the safe fixes are applied.
#[test]
fn the_default_rules_on_the_real_servers() {
    let expected = [
        ("everything", 13),
        ("filesystem", 15),
        ("memory", 14),
        ("time", 2),
        ("git", 12),
        ("fetch", 1),
    ];
    for (server, open_objects) in expected {
        let text = support::real_catalog_text(server);
        let found = counts(RuleSelection::default(), &text);
        assert_eq!(
            found,
            BTreeMap::from([("SCH-002", open_objects)]),
            "{server}"
        );
        let linter = Linter::new(RuleSelection::default());
        let report = linter.lint(server, &text).unwrap();
        assert!(report
            .diagnostics
            .iter()
            .all(|d| d.fix_applicability() == Some(toolschema::lint::Applicability::Safe)));
        let fixed = linter.fix(server, &text, false).unwrap();
        assert_eq!(fixed.fixed, open_objects, "{server}");
        assert!(
            fixed.remaining.diagnostics.is_empty(),
            "{server}: {:?}",
            fixed.remaining.diagnostics
        );
    }
}
