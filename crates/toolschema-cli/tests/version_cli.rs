//! `toolschema --version`: the version and the commit the binary was built from (build.rs).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .current_dir(common::root())
        .args(args)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

#[test]
fn version_names_the_version_and_the_commit_built_from() {
    let out = Command::new(common::toolschema())
        .arg("--version")
        .output()
        .unwrap();
    assert!(out.status.success());
    let line = String::from_utf8(out.stdout).unwrap();
    let version = env!("CARGO_PKG_VERSION");
    // In a checkout git can read, the commit is HEAD's (the test command builds right before
    // testing); elsewhere the line says the commit is unknown.
    let expected = match (
        git(&["rev-parse", "HEAD"]),
        git(&["log", "-1", "--format=%cs", "HEAD"]),
    ) {
        (Some(commit), Some(date)) => {
            format!("toolschema {version} (commit {}, {date})\n", &commit[..12])
        }
        _ => format!("toolschema {version} (commit unknown: built outside a git checkout)\n"),
    };
    assert_eq!(line, expected);
}
