//! Reading the command line's inputs: files, standard input, inline JSON, with errors that name
//! the file, line and column; and option values with units (seconds, sizes).

use std::fmt;
use std::io::Read;
use std::path::Path;
pub use toolschema::size::parse_size;
/// Seconds options, parsed as every server's flags parse them.
pub use toolschema_http::flags::parse_seconds;

/// A failure the user can fix: bad input, a missing file, an unknown tool. Exit code 2.
#[derive(Debug)]
pub struct InputError(pub String);

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InputError {}

impl From<toolschema::CatalogError> for InputError {
    fn from(e: toolschema::CatalogError) -> Self {
        InputError(e.to_string())
    }
}

/// The name a path is reported under: `<stdin>` for `-`.
pub fn display_name(path: &str) -> &str {
    if path == "-" {
        "<stdin>"
    } else {
        path
    }
}

/// A file that could not be read as UTF-8 text: its name as reported and what went wrong.
#[derive(Debug)]
pub struct ReadError {
    /// The file as [`display_name`] names it.
    pub file: String,
    /// What went wrong, without the file's name.
    pub problem: String,
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.file, self.problem)
    }
}

impl std::error::Error for ReadError {}

impl From<ReadError> for InputError {
    fn from(e: ReadError) -> Self {
        InputError(e.to_string())
    }
}

/// Whether standard input has been read: it can be read once.
static STDIN_READ: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The most of one input read whole into memory: 1 GiB. Reading an endless input (`/dev/zero`,
/// a producer that never stops) stops here with an error instead of taking all the memory
/// there is; a catalog file is linted in pieces and is not bound by it.
pub const MAX_INPUT_BYTES: u64 = 1 << 30;

/// Read a whole file (or standard input for `-`) as UTF-8, at most [`MAX_INPUT_BYTES`].
/// Standard input is read once: a second `-` in the same command is an error, not an empty
/// input.
pub fn read_text(path: &str) -> Result<String, ReadError> {
    if path != "-" {
        return read_file(Path::new(path));
    }
    if STDIN_READ.swap(true, std::sync::atomic::Ordering::SeqCst) {
        return Err(ReadError {
            file: display_name(path).to_string(),
            problem: "standard input was read already for another input of this command: give `-` (or `@-`) once".into(),
        });
    }
    utf8_text(display_name(path), read_bounded(std::io::stdin().lock(), 0))
}

/// Read a whole file as UTF-8, at most [`MAX_INPUT_BYTES`].
pub fn read_file(path: &Path) -> Result<String, ReadError> {
    let bytes = std::fs::File::open(path).and_then(|file| {
        // Sized from the file's length up front: a large catalog is never held twice while its
        // buffer grows. A device or a pipe says 0 and is read to its end.
        let len = file.metadata()?.len();
        read_bounded(file, len)
    });
    utf8_text(&path.display().to_string(), bytes)
}

/// The text of what was read from `file`, or why there is none.
fn utf8_text(file: &str, bytes: std::io::Result<Vec<u8>>) -> Result<String, ReadError> {
    let failed = |problem: String| ReadError {
        file: file.to_string(),
        problem,
    };
    let bytes = bytes.map_err(|e| failed(format!("cannot read: {e}")))?;
    String::from_utf8(bytes).map_err(|e| {
        let offset = e.utf8_error().valid_up_to();
        failed(format!("not valid UTF-8 (at byte {offset})"))
    })
}

/// Everything `reader` gives, refused past [`MAX_INPUT_BYTES`] (before anything is read when
/// the expected `len` says so already).
fn read_bounded(mut reader: impl Read, len: u64) -> std::io::Result<Vec<u8>> {
    let too_long = || {
        std::io::Error::other(format!(
            "it holds more than {} GiB, the most toolschema reads of one input into memory",
            MAX_INPUT_BYTES >> 30
        ))
    };
    let max = usize::try_from(MAX_INPUT_BYTES).unwrap_or(usize::MAX);
    if len > MAX_INPUT_BYTES {
        return Err(too_long());
    }
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    if len > 0 {
        // A regular file: read straight into a buffer of its size.
        reader.take(MAX_INPUT_BYTES + 1).read_to_end(&mut bytes)?;
        return if bytes.len() > max {
            Err(too_long())
        } else {
            Ok(bytes)
        };
    }
    let mut block = vec![0; 64 * 1024];
    loop {
        let n = match reader.read(&mut block) {
            Ok(0) => return Ok(bytes),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if n > max - bytes.len() {
            return Err(too_long());
        }
        // Grown by doubling, but never past the bound (the standard doubling would allocate
        // twice the bound for the one byte over it).
        if bytes.capacity() - bytes.len() < n {
            let wanted = (bytes.capacity() * 2).max(bytes.len() + n).min(max);
            bytes.reserve_exact(wanted - bytes.len());
        }
        bytes.extend_from_slice(&block[..n]);
    }
}

/// A regular file opened to be read a piece at a time, at any offset (see
/// `Linter::lint_source_each`), with its length and modification time when opened, to tell
/// whether it changed.
pub struct FileBytes {
    file: std::fs::File,
    len: usize,
    modified: Option<std::time::SystemTime>,
}

impl FileBytes {
    /// Open `path` when it is a regular file; `Ok(None)` for standard input, a pipe or a device
    /// (read whole, once), and where files cannot be read at an offset.
    pub fn open(path: &str) -> Result<Option<FileBytes>, ReadError> {
        if path == "-" || cfg!(not(unix)) {
            return Ok(None);
        }
        let failed = |e: std::io::Error| ReadError {
            file: display_name(path).to_string(),
            problem: format!("cannot read: {e}"),
        };
        // Looked at before it is opened: a named pipe is opened once, by the reading that takes
        // it whole.
        if !std::fs::metadata(path).map_err(failed)?.is_file() {
            return Ok(None);
        }
        let file = std::fs::File::open(path).map_err(failed)?;
        let metadata = file.metadata().map_err(failed)?;
        let Ok(len) = usize::try_from(metadata.len()) else {
            return Ok(None);
        };
        Ok(metadata.is_file().then(|| FileBytes {
            file,
            len,
            modified: metadata.modified().ok(),
        }))
    }

    /// Whether the file still has the length and modification time it had when opened.
    pub fn unchanged(&self) -> bool {
        self.file.metadata().is_ok_and(|now| {
            usize::try_from(now.len()) == Ok(self.len) && now.modified().ok() == self.modified
        })
    }
}

impl toolschema::catalog::ByteSource for FileBytes {
    fn byte_len(&self) -> usize {
        self.len
    }

    #[cfg(unix)]
    fn read_exact_at(&self, buf: &mut [u8], offset: usize) -> std::io::Result<()> {
        std::os::unix::fs::FileExt::read_exact_at(&self.file, buf, offset as u64).map_err(|e| {
            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                std::io::Error::new(
                    e.kind(),
                    "the file changed while it was linted (it is shorter than it was): lint it again",
                )
            } else {
                e
            }
        })
    }

    #[cfg(not(unix))]
    fn read_exact_at(&self, _buf: &mut [u8], _offset: usize) -> std::io::Result<()> {
        // Never opened here: `FileBytes::open` reads such files whole.
        Err(std::io::ErrorKind::Unsupported.into())
    }
}

/// Parse JSON text, reporting errors as `name:line:column: invalid JSON: ...`.
pub fn parse_json(name: &str, text: &str) -> Result<serde_json::Value, InputError> {
    toolschema::json::parse_named(name, text).map_err(|e| InputError(e.to_string()))
}

/// Parse line `number` of a JSON Lines file, reporting errors as `name:number:column: ...`.
pub fn parse_json_line(
    name: &str,
    number: usize,
    line: &str,
) -> Result<serde_json::Value, InputError> {
    toolschema::json::parse(line).map_err(|e| {
        let column = toolschema::json::position_of(line, e.offset).column;
        InputError(format!(
            "{name}:{number}:{column}: invalid JSON: {}",
            e.message
        ))
    })
}

/// The text of a JSON argument given inline or as `@file` (`@-` for standard input), with the
/// name its positions are reported under (the file, or the flag).
pub fn json_argument_text(flag: &str, value: &str) -> Result<(String, String), InputError> {
    match value.strip_prefix('@') {
        Some(path) => Ok((display_name(path).to_string(), read_text(path)?)),
        None => Ok((flag.to_string(), value.to_string())),
    }
}

/// An HTTP header written `Name: value` (`--header`).
pub fn parse_header(header: &str) -> Result<(String, String), InputError> {
    match header.split_once(':') {
        Some((name, value)) if !name.trim().is_empty() => {
            Ok((name.trim().to_string(), value.trim().to_string()))
        }
        _ => Err(InputError(format!(
            "--header '{header}': write it as 'Name: value'"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn seconds_are_positive() {
        assert_eq!(parse_seconds("0.5"), Ok(Duration::from_millis(500)));
        assert!(parse_seconds("0").is_err());
        assert!(parse_seconds("soon").is_err());
        assert_eq!(parse_seconds("86400"), Ok(Duration::from_secs(86_400)));
        for huge in ["1e20", "86400.5", "1e308", "inf", "NaN", "-1", "1e-300"] {
            assert!(parse_seconds(huge).is_err(), "{huge}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_file_that_changes_while_it_is_read_in_pieces_says_so() {
        use toolschema::catalog::ByteSource;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tools.json");
        std::fs::write(&path, "[1, 2, 3]").unwrap();
        let name = path.to_str().unwrap();
        let file = FileBytes::open(name)
            .unwrap()
            .expect("a regular file is read in pieces");
        assert!(file.unchanged());
        let mut piece = [0; 3];
        file.read_exact_at(&mut piece, 4).unwrap();
        assert_eq!(&piece, b"2, ");

        // Longer: its length no longer matches.
        std::fs::write(&path, "[1, 2, 3, 4]").unwrap();
        assert!(!file.unchanged());
        // Shorter: a piece past its new end is refused, saying why.
        std::fs::write(&path, "[]").unwrap();
        let error = file.read_exact_at(&mut piece, 4).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("the file changed while it was linted"),
            "{error}"
        );
        // Rewritten with the same length: the modification time tells, where the file
        // system's clock has moved on since the file was opened.
        let same_length = FileBytes::open(name).unwrap().unwrap();
        let opened = std::fs::metadata(&path).unwrap().modified().unwrap();
        let later = opened + Duration::from_secs(2);
        let rewritten = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        std::io::Write::write_all(&mut &rewritten, b"{}").unwrap();
        rewritten.set_modified(later).unwrap();
        assert!(!same_length.unchanged());

        // Standard input, a pipe or a device is read whole instead.
        assert!(FileBytes::open("-").unwrap().is_none());
        assert!(FileBytes::open("/dev/null").unwrap().is_none());
    }
}
