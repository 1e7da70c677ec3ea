//! `--write`: put a fixed catalog back where it came from, the way an editor saves a file.
//!
//! - A symbolic link is followed: the file it points at is rewritten, the link stays a link.
//! - A file with other hard links is rewritten in place, so every name still sees one file.
//! - Permissions (and, when the process may, the owner) are kept.
//! - A file that is read-only, that this process may not write, or that is not a regular file is
//!   refused with a message, and left as it was.
//!
//! Otherwise the new text goes to a temporary file beside the target, which then replaces it, so a
//! failure never leaves a file half written.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Replace the contents of the file `path` names (through any symbolic links) with `text`.
/// The error says why, in words, without the path.
pub fn write_like_an_editor(path: &Path, text: &str) -> Result<(), String> {
    let target = fs::canonicalize(path).map_err(|e| format!("cannot resolve the path: {e}"))?;
    let metadata = fs::metadata(&target).map_err(|e| format!("cannot read its metadata: {e}"))?;
    if !metadata.is_file() {
        return Err("not a regular file; nothing was written".into());
    }
    if metadata.permissions().readonly() {
        return Err("the file is read-only; nothing was written".into());
    }
    // Opening for writing (without truncating) asks the system whether this process may.
    fs::OpenOptions::new()
        .write(true)
        .open(&target)
        .map_err(|e| format!("cannot write the file ({e}); nothing was written"))?;
    if has_other_links(&metadata) {
        return overwrite(&target, text);
    }
    match replace(&target, text, &metadata) {
        Ok(()) => Ok(()),
        // A folder we may not create files in, or an owner we cannot give the new file: write
        // the file itself instead.
        Err(Fallback::InPlace) => overwrite(&target, text),
        Err(Fallback::Failed(message)) => Err(message),
    }
}

enum Fallback {
    InPlace,
    Failed(String),
}

#[cfg(unix)]
fn has_other_links(metadata: &fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    metadata.nlink() > 1
}

#[cfg(not(unix))]
fn has_other_links(_: &fs::Metadata) -> bool {
    false
}

/// Write `text` over the file itself: keeps its inode, links, owner and permissions.
fn overwrite(target: &Path, text: &str) -> Result<(), String> {
    let mut file = fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(target)
        .map_err(|e| format!("cannot write the file: {e}"))?;
    file.write_all(text.as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(|e| format!("writing the file failed: {e}"))
}

/// Write a temporary file beside `target` with its permissions and owner, then rename it over
/// `target`.
fn replace(target: &Path, text: &str, metadata: &fs::Metadata) -> Result<(), Fallback> {
    let temporary = temporary_name(target);
    let created = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&temporary);
    let Ok(mut file) = created else {
        return Err(Fallback::InPlace);
    };
    let cleanup = |message: String| {
        let _ = fs::remove_file(&temporary);
        Fallback::Failed(message)
    };
    if let Err(e) = file
        .write_all(text.as_bytes())
        .and_then(|()| file.sync_all())
    {
        return Err(cleanup(format!("writing the file failed: {e}")));
    }
    drop(file);
    if let Err(e) = fs::set_permissions(&temporary, metadata.permissions()) {
        return Err(cleanup(format!("cannot keep the file's permissions: {e}")));
    }
    if !same_owner(&temporary, metadata) {
        let _ = fs::remove_file(&temporary);
        return Err(Fallback::InPlace);
    }
    fs::rename(&temporary, target).map_err(|e| cleanup(format!("cannot replace the file: {e}")))
}

/// Give the new file the target's owner; whether it has it now.
#[cfg(unix)]
fn same_owner(new: &Path, target: &fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(current) = fs::metadata(new) else {
        return false;
    };
    if current.uid() == target.uid() && current.gid() == target.gid() {
        return true;
    }
    std::os::unix::fs::chown(new, Some(target.uid()), Some(target.gid())).is_ok()
}

#[cfg(not(unix))]
fn same_owner(_: &Path, _: &fs::Metadata) -> bool {
    true
}

fn temporary_name(target: &Path) -> PathBuf {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    target.with_file_name(format!(".{name}.toolschema-fix-{}", std::process::id()))
}
