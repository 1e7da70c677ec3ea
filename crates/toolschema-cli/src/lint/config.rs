//! Finding and reading `toolschema.toml`.

use crate::input::InputError;
use std::path::{Path, PathBuf};
use toolschema::lint::ConfigFile;

/// The settings file's name.
pub const FILE_NAME: &str = "toolschema.toml";

/// Read and parse a settings file; returns its name as shown in messages and its contents.
pub fn read(path: &Path) -> Result<(String, ConfigFile), InputError> {
    let name = path.display().to_string();
    let text = crate::input::read_file(path)?;
    let contents: ConfigFile = toml::from_str(&text)
        .map_err(|e| InputError(format!("{name}: {}", e.to_string().trim_end())))?;
    Ok((name, contents))
}

/// The nearest `toolschema.toml` in the current directory or one of its parents.
pub fn nearest_file() -> Option<PathBuf> {
    nearest(&std::env::current_dir().ok()?)
}

/// The nearest `toolschema.toml` in the current directory or one of its parents, read.
pub fn find() -> Result<Option<(String, ConfigFile)>, InputError> {
    let Ok(start) = std::env::current_dir() else {
        return Ok(None);
    };
    match nearest(&start) {
        Some(path) => read(&path).map(Some),
        None => Ok(None),
    }
}

fn nearest(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .map(|dir| dir.join(FILE_NAME))
        .find(|candidate| candidate.is_file())
}
