//! The book's generated pages (rule pages, their index, the CLI reference) are what the code
//! generates today: a rule's doc comment or a flag's help that changed fails this test until
//! `cargo run -p toolschema-cli -- generate-docs docs/src` writes the pages again.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use assert_cmd::Command;
use std::path::{Path, PathBuf};

fn book_src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/src")
}

#[test]
fn the_committed_generated_pages_are_current() {
    let output = Command::cargo_bin("toolschema")
        .expect("the toolschema binary")
        .args(["generate-docs", "--check"])
        .arg(book_src())
        .output()
        .expect("run generate-docs --check");
    assert!(
        output.status.success(),
        "generated docs are stale (exit {:?}):\n{}{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Copy the book's source into a scratch directory (files only, as deep as it goes).
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create a directory");
    for entry in std::fs::read_dir(from).expect("read a directory").flatten() {
        let path = entry.path();
        let target = to.join(entry.file_name());
        if path.is_dir() {
            copy_tree(&path, &target);
        } else {
            std::fs::copy(&path, &target).expect("copy a file");
        }
    }
}

#[test]
fn a_stale_or_extra_page_fails_the_check_and_generating_fixes_it() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    copy_tree(&book_src(), dir.path());
    // A rule page edited by hand, a CLI reference one flag behind, a page for no rule.
    let rule_page = dir.path().join("rules/SCH-002.md");
    let text = std::fs::read_to_string(&rule_page).expect("the SCH-002 page");
    std::fs::write(
        &rule_page,
        text.replace("additionalProperties", "additionalProps"),
    )
    .expect("edit the page");
    let cli = dir.path().join("reference/cli.md");
    let text = std::fs::read_to_string(&cli).expect("the CLI reference");
    std::fs::write(
        &cli,
        text.replacen("--assert-format", "--assert-formats", 1),
    )
    .expect("edit the reference");
    std::fs::write(dir.path().join("rules/SCH-999.md"), "# gone\n").expect("add a page");

    let output = Command::cargo_bin("toolschema")
        .expect("the toolschema binary")
        .args(["generate-docs", "--check"])
        .arg(dir.path())
        .output()
        .expect("run generate-docs --check");
    assert_eq!(output.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&output.stdout);
    for stale in ["reference/cli.md", "rules/SCH-002.md", "rules/SCH-999.md"] {
        assert!(stdout.contains(stale), "{stale} not named in:\n{stdout}");
    }
    assert!(
        stdout.contains("cargo run -p toolschema-cli -- generate-docs docs/src"),
        "{stdout}"
    );

    Command::cargo_bin("toolschema")
        .expect("the toolschema binary")
        .arg("generate-docs")
        .arg(dir.path())
        .assert()
        .success();
    assert!(!dir.path().join("rules/SCH-999.md").exists());
    Command::cargo_bin("toolschema")
        .expect("the toolschema binary")
        .args(["generate-docs", "--check"])
        .arg(dir.path())
        .assert()
        .success();
}

#[test]
fn a_summary_without_the_markers_is_bad_input() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    std::fs::write(dir.path().join("SUMMARY.md"), "# Summary\n").expect("write SUMMARY.md");
    let output = Command::cargo_bin("toolschema")
        .expect("the toolschema binary")
        .args(["generate-docs", "--check"])
        .arg(dir.path())
        .output()
        .expect("run generate-docs");
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("lacks the markers"));
}
