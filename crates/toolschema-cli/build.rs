//! Records the commit the binary is built from, for `toolschema --version`.
//!
//! Sources, first found wins: `TOOLSCHEMA_BUILD_COMMIT` (set by a packager), git (a build in a
//! checkout that tracks this crate), `.cargo_vcs_info.json` (a crate packaged by cargo). A build
//! with none of them (an sdist, a copied tree) still builds and says the commit is unknown.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=TOOLSCHEMA_BUILD_COMMIT");
    let dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let commit = from_env()
        .or_else(|| from_git(&dir))
        .or_else(|| from_vcs_info(&dir))
        .unwrap_or_else(|| "commit unknown: built outside a git checkout".to_string());
    println!("cargo:rustc-env=TOOLSCHEMA_BUILD_COMMIT_INFO={commit}");
}

fn from_env() -> Option<String> {
    let value = std::env::var("TOOLSCHEMA_BUILD_COMMIT").ok()?;
    let value = value.trim();
    // Only a commit id goes in the version line: anything else is ignored, not printed.
    if value.len() >= 7 && value.len() <= 64 && value.bytes().all(|b| b.is_ascii_hexdigit()) {
        Some(format!("commit {}", &value[..value.len().min(12)]))
    } else {
        None
    }
}

fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .current_dir(dir)
        .args(args)
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?;
    Some(text.trim().to_string())
}

/// The checkout's HEAD, only when git tracks this crate: an unpacked source package inside some
/// other repository (or in this one's target/, as `cargo package` builds it) must not report
/// that repository's commit.
fn from_git(dir: &Path) -> Option<String> {
    git(dir, &["ls-files", "--error-unmatch", "Cargo.toml"])?;
    let commit = git(dir, &["rev-parse", "HEAD"])?;
    let date = git(dir, &["log", "-1", "--format=%cs", "HEAD"]).unwrap_or_default();
    // Rebuild when HEAD moves: HEAD itself, the branch it names, and packed refs.
    for path in ["HEAD", "packed-refs"] {
        watch(dir, path);
    }
    if let Some(branch) = git(dir, &["symbolic-ref", "-q", "HEAD"]) {
        watch(dir, &branch);
    }
    let short = &commit[..commit.len().min(12)];
    Some(if date.is_empty() {
        format!("commit {short}")
    } else {
        format!("commit {short}, {date}")
    })
}

/// Asks cargo to rerun this script when a git file changes; only files that exist, since a
/// missing one would rerun it on every build.
fn watch(dir: &Path, git_path: &str) {
    if let Some(path) = git(
        dir,
        &[
            "rev-parse",
            "--path-format=absolute",
            "--git-path",
            git_path,
        ],
    ) {
        if Path::new(&path).exists() {
            println!("cargo:rerun-if-changed={path}");
        }
    }
}

/// `cargo package` writes the commit into `.cargo_vcs_info.json` (`"sha1": "..."`).
fn from_vcs_info(dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(dir.join(".cargo_vcs_info.json")).ok()?;
    let start = text.find("\"sha1\"")?;
    let rest = &text[start + "\"sha1\"".len()..];
    let rest = &rest[rest.find('"')? + 1..];
    let sha = &rest[..rest.find('"')?];
    if sha.len() >= 7 && sha.bytes().all(|b| b.is_ascii_hexdigit()) {
        Some(format!("commit {}", &sha[..12.min(sha.len())]))
    } else {
        None
    }
}
