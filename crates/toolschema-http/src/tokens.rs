//! `--auth-token-file`: static bearer tokens, one `NAME:TOKEN [SCOPE...]` a line.
//!
//! Only SHA-256 hashes of the tokens are kept once the file is read, and a presented token is
//! compared with every hash in constant time. Names are what logs and the audit show; no error
//! message ever quotes a token or a line that holds one.

use sha2::{Digest, Sha256};
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use subtle::ConstantTimeEq;

/// The shortest token accepted: anything shorter can be guessed.
pub const MIN_TOKEN_LENGTH: usize = 16;

/// Why a token file cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenFileError {
    /// The file cannot be read.
    #[error("{path}: cannot read the token file: {reason}")]
    Read {
        /// The file.
        path: String,
        /// The I/O error.
        reason: String,
    },
    /// A line is not `NAME:TOKEN [SCOPE...]`, or breaks a rule.
    #[error("{path}:{line}: {reason}")]
    Line {
        /// The file.
        path: String,
        /// The line number, from 1.
        line: usize,
        /// What is wrong (never the token).
        reason: String,
    },
    /// No token at all: nobody could connect.
    #[error("{path}: no tokens (one NAME:TOKEN a line)")]
    Empty {
        /// The file.
        path: String,
    },
}

/// One token of the file, hashed.
#[derive(Debug, Clone)]
struct Entry {
    name: Arc<str>,
    hash: [u8; 32],
    scopes: BTreeSet<String>,
}

/// The tokens of a token file; [`TokenFile::reload`] reads the file again.
#[derive(Debug)]
pub struct TokenFile {
    path: PathBuf,
    entries: RwLock<Arc<Vec<Entry>>>,
}

/// A token that matched: its name and scopes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenMatch {
    /// The name given in the file.
    pub name: Arc<str>,
    /// The scopes given after the token.
    pub scopes: BTreeSet<String>,
}

impl TokenFile {
    /// Read and check `path`.
    pub fn load(path: &Path) -> Result<TokenFile, TokenFileError> {
        let entries = read(path)?;
        Ok(TokenFile {
            path: path.to_path_buf(),
            entries: RwLock::new(Arc::new(entries)),
        })
    }

    /// Read the file again. On error the tokens loaded before stay in force.
    pub fn reload(&self) -> Result<usize, TokenFileError> {
        let entries = read(&self.path)?;
        let count = entries.len();
        if let Ok(mut current) = self.entries.write() {
            *current = Arc::new(entries);
        }
        Ok(count)
    }

    /// How many tokens are in force.
    pub fn len(&self) -> usize {
        self.current().len()
    }

    /// Whether no token is in force (never, after a successful load).
    pub fn is_empty(&self) -> bool {
        self.current().is_empty()
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn current(&self) -> Arc<Vec<Entry>> {
        match self.entries.read() {
            Ok(entries) => entries.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// The entry whose token is `presented`, if any. Every hash is compared, in constant time.
    pub fn find(&self, presented: &str) -> Option<TokenMatch> {
        let hash: [u8; 32] = Sha256::digest(presented.as_bytes()).into();
        let mut found: Option<&Entry> = None;
        let entries = self.current();
        for entry in entries.iter() {
            if bool::from(entry.hash.ct_eq(&hash)) {
                found = Some(entry);
            }
        }
        found.map(|entry| TokenMatch {
            name: entry.name.clone(),
            scopes: entry.scopes.clone(),
        })
    }
}

fn read(path: &Path) -> Result<Vec<Entry>, TokenFileError> {
    let text = std::fs::read_to_string(path).map_err(|e| TokenFileError::Read {
        path: path.display().to_string(),
        reason: e.to_string(),
    })?;
    parse(&text, &path.display().to_string())
}

/// Whether `c` may appear in a bearer token (RFC 6750's `b64token`, whose `=` may only end it).
fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '~' | '+' | '/')
}

fn is_b64token(token: &str) -> bool {
    let body = token.trim_end_matches('=');
    !body.is_empty() && body.chars().all(is_token_char)
}

/// Parse a token file's text; `path` names it in errors. Blank lines and lines starting with `#`
/// are skipped.
fn parse(text: &str, path: &str) -> Result<Vec<Entry>, TokenFileError> {
    let text = &text[toolschema::json::text_start(text)..];
    let mut entries = Vec::new();
    let mut names: HashMap<String, usize> = HashMap::new();
    let mut hashes: HashMap<[u8; 32], usize> = HashMap::new();
    for (index, raw) in text.lines().enumerate() {
        let line_number = index + 1;
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let error = |reason: String| TokenFileError::Line {
            path: path.to_string(),
            line: line_number,
            reason,
        };
        let Some((name, rest)) = line.split_once(':') else {
            return Err(error("expected NAME:TOKEN (no ':' on this line)".into()));
        };
        let name = name.trim();
        if name.is_empty() {
            return Err(error("the name before ':' is empty".into()));
        }
        if name.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(error(format!(
                "the name {name:?} has spaces or control characters"
            )));
        }
        let mut words = rest.split_whitespace();
        let Some(token) = words.next() else {
            return Err(error(format!("the token of '{name}' is empty")));
        };
        if !is_b64token(token) {
            return Err(error(format!(
                "the token of '{name}' has characters a bearer token cannot carry \
                 (letters, digits and - . _ ~ + / only, = at the end)"
            )));
        }
        if token.len() < MIN_TOKEN_LENGTH {
            return Err(error(format!(
                "the token of '{name}' is shorter than {MIN_TOKEN_LENGTH} characters: \
                 use a long random one (for example `openssl rand -hex 32`)"
            )));
        }
        if let Some(first) = names.insert(name.to_string(), line_number) {
            return Err(error(format!("the name '{name}' is also on line {first}")));
        }
        let hash: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        if let Some(first) = hashes.insert(hash, line_number) {
            return Err(error(format!(
                "the token of '{name}' is also the token on line {first}: each client needs its own"
            )));
        }
        entries.push(Entry {
            name: Arc::from(name),
            hash,
            scopes: words.map(str::to_string).collect(),
        });
    }
    if entries.is_empty() {
        return Err(TokenFileError::Empty {
            path: path.to_string(),
        });
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const ALICE: &str = "alice-0123456789abcdef";
    const BOB: &str = "bob-0123456789abcdefgh";

    fn file(text: &str) -> (tempfile::TempDir, TokenFile) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tokens");
        std::fs::write(&path, text).unwrap();
        let tokens = TokenFile::load(&path).unwrap();
        (dir, tokens)
    }

    #[test]
    fn finds_tokens_by_hash_with_their_scopes() {
        // A byte order mark before the first line is no part of it.
        let (_dir, tokens) = file(&format!(
            "\u{feff}alice:{ALICE} files:read  config:write\r\n\n# clients\n bob : {BOB}\n"
        ));
        assert_eq!(tokens.len(), 2);
        let alice = tokens.find(ALICE).unwrap();
        assert_eq!(&*alice.name, "alice");
        assert_eq!(
            alice.scopes.iter().map(String::as_str).collect::<Vec<_>>(),
            ["config:write", "files:read"]
        );
        let bob = tokens.find(BOB).unwrap();
        assert_eq!(&*bob.name, "bob");
        assert!(bob.scopes.is_empty());
        assert_eq!(tokens.find("alice"), None);
        assert_eq!(tokens.find(&ALICE[1..]), None);
        assert_eq!(tokens.find(""), None);
    }

    #[test]
    fn errors_name_the_line_never_the_token() {
        let cases = [
            ("alice", "t:1: expected NAME:TOKEN (no ':' on this line)"),
            (":0123456789abcdefgh", "t:1: the name before ':' is empty"),
            ("alice:", "t:1: the token of 'alice' is empty"),
            (
                "alice:tiny12",
                "t:1: the token of 'alice' is shorter than 16 characters: use a long random one (for example `openssl rand -hex 32`)",
            ),
            (
                "alice:0123456789abcdef\"x",
                "t:1: the token of 'alice' has characters a bearer token cannot carry (letters, digits and - . _ ~ + / only, = at the end)",
            ),
            (
                "a:0123456789abcdefA\n\na:0123456789abcdefB",
                "t:3: the name 'a' is also on line 1",
            ),
            (
                "a:0123456789abcdefA\nb:0123456789abcdefA",
                "t:2: the token of 'b' is also the token on line 1: each client needs its own",
            ),
            ("# nothing\n", "t: no tokens (one NAME:TOKEN a line)"),
        ];
        for (text, expected) in cases {
            let error = parse(text, "t").unwrap_err().to_string();
            assert_eq!(error, expected, "{text:?}");
            for token in ["0123456789abcdef", "tiny12"] {
                assert!(!error.contains(token), "{error} quotes the token");
            }
        }
    }

    #[test]
    fn reload_replaces_the_tokens_and_keeps_them_on_error() {
        let (dir, tokens) = file(&format!("alice:{ALICE}\n"));
        let path = dir.path().join("tokens");
        std::fs::write(&path, format!("bob:{BOB}\n")).unwrap();
        assert_eq!(tokens.reload(), Ok(1));
        assert_eq!(tokens.find(ALICE), None);
        assert!(tokens.find(BOB).is_some());
        std::fs::write(&path, "broken\n").unwrap();
        assert!(tokens.reload().is_err());
        assert!(
            tokens.find(BOB).is_some(),
            "a broken file keeps the tokens in force"
        );
    }

    proptest! {
        /// Any text parses or fails without panicking, and an error never quotes a token.
        #[test]
        fn any_text_is_parsed_or_refused(text in "\\PC{0,200}") {
            if let Err(error) = parse(&text, "t") {
                let message = error.to_string();
                for line in text.lines() {
                    if let Some((_, token)) = line.split_once(':') {
                        let token = token.trim();
                        if token.len() >= MIN_TOKEN_LENGTH {
                            prop_assert!(!message.contains(token));
                        }
                    }
                }
            }
        }

        /// A token is found exactly when it is one of the file's.
        #[test]
        fn a_token_matches_only_itself(
            tokens in proptest::collection::btree_set("[A-Za-z0-9._~+/-]{16,40}", 1..6),
            probe in "[A-Za-z0-9._~+/-]{0,40}",
        ) {
            let text: String = tokens
                .iter()
                .enumerate()
                .map(|(i, t)| format!("client{i}:{t}\n"))
                .collect();
            let entries = parse(&text, "t").unwrap();
            let file = TokenFile { path: PathBuf::new(), entries: RwLock::new(Arc::new(entries)) };
            for (i, token) in tokens.iter().enumerate() {
                let found = file.find(token).unwrap();
                prop_assert_eq!(&*found.name, format!("client{i}"));
            }
            prop_assert_eq!(file.find(&probe).is_some(), tokens.contains(&probe));
        }
    }
}
