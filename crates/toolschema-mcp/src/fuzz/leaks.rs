//! What an answer must not show: stack traces, absolute paths of the server's machine, and
//! secret-shaped tokens.
//!
//! Whatever the caller sent, or already knows, is not a leak: a server that echoes its
//! arguments, or names the directory it was started with, shows nothing new. So a match that
//! appears in the known text (the arguments, the command line, the tool's listing), a path
//! under a path the caller gave, or a JSON Pointer into the arguments (`/app/name`, as a
//! validator names the argument it refuses) is passed over.

use regex::Regex;
use std::sync::OnceLock;

/// What kind of thing leaked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeakKind {
    /// A stack trace of a program.
    StackTrace(&'static str),
    /// An absolute path of the server's machine.
    Path,
    /// A token shaped like a credential.
    Secret(&'static str),
}

/// One thing that leaked, as it appeared (secrets shortened).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leak {
    /// What it is.
    pub kind: LeakKind,
    /// The text that matched (a secret keeps only its first characters).
    pub excerpt: String,
}

impl Leak {
    /// The leak in words: `a Node.js stack trace: 'at handler (/srv/app.js:3:9)'`.
    pub fn describe(&self) -> String {
        match self.kind {
            LeakKind::StackTrace(language) => {
                format!("a {language} stack trace: '{}'", self.excerpt)
            }
            LeakKind::Path => format!(
                "an absolute path of the server's machine: '{}'",
                self.excerpt
            ),
            LeakKind::Secret(what) => format!("a secret-shaped token ({what}): '{}'", self.excerpt),
        }
    }

    /// Whether it is a credential (worse than a trace or a path).
    pub fn is_secret(&self) -> bool {
        matches!(self.kind, LeakKind::Secret(_))
    }
}

struct Patterns {
    traces: Vec<(&'static str, Regex)>,
    /// Paths: the path is the first group, or the whole match.
    paths: Vec<(&'static str, Regex)>,
    secrets: Vec<(&'static str, Regex)>,
    /// Any absolute path of two or more parts; a leak when its top directory is one the
    /// server's machine is known to have (see [`Known::add_machine_root`]).
    any_path: Option<Regex>,
}

/// How many patterns there are, for the test that every one compiles.
#[cfg(test)]
const PATTERN_COUNT: usize = 5 + 2 + 9 + 1;

/// The patterns, compiled once. They are constants of this file (a test compiles each), so a
/// pattern that failed would only be left out, never panic on input.
fn patterns() -> &'static Patterns {
    static PATTERNS: OnceLock<Patterns> = OnceLock::new();
    PATTERNS.get_or_init(|| {
        let compile = |list: &[(&'static str, &str)]| -> Vec<(&'static str, Regex)> {
            list.iter()
                .filter_map(|(name, pattern)| Regex::new(pattern).ok().map(|r| (*name, r)))
                .collect()
        };
        Patterns {
            traces: compile(&[
                (
                    "Node.js",
                    r"(?m)^\s*at (?:[^\n()]+ \()?(?:/|file://|node:|[A-Za-z]:\\)[^\n()]*:\d+:\d+\)?\s*$",
                ),
                ("Python", r"Traceback \(most recent call last\):|File \x22[^\x22\n]+\x22, line \d+, in "),
                ("Rust", r"panicked at [^\s:]+\.rs:\d+:\d+|stack backtrace:\s*\n\s*0:"),
                (
                    "Java",
                    r"(?m)^\s*at (?:[\w$]+\.)+[\w$<>]+\((?:[\w$]+\.(?:java|kt):\d+|Native Method|Unknown Source)\)",
                ),
                ("Go", r"goroutine \d+ \[[\w ]+\]:|(?m)^\s*/\S+\.go:\d+ \+0x[0-9a-f]+"),
            ]),
            paths: compile(&[
                (
                    "unix",
                    r#"(?:^|[\s"'(\[{=,;:<>])(/(?:home|Users|root|usr|opt|var|srv|etc|private|mnt|app|workspace|work|data|run|snap|nix|Library|Applications|System|proc|boot|media|lib|lib64|bin|sbin|tmp)(?:/[^\s"'<>()\[\]{},;:*?|`]+)+)"#,
                ),
                ("windows", r#"\b[A-Za-z]:\\(?:[^\\\s"'<>|:*?]+\\)+[^\\\s"'<>|:*?]*"#),
            ]),
            any_path: Regex::new(
                r#"(?:^|[\s"'(\[{=,;:<>])(/[^\s"'<>()\[\]{},;:*?|`/]+(?:/[^\s"'<>()\[\]{},;:*?|`]+)+)"#,
            )
            .ok(),
            secrets: compile(&[
                ("an OpenAI or Anthropic API key", r"\bsk-(?:proj-|ant-[a-z0-9]+-)?[A-Za-z0-9_-]{20,}"),
                ("a GitHub token", r"\bgh[pousr]_[A-Za-z0-9]{36,}|\bgithub_pat_[A-Za-z0-9_]{22,}"),
                ("an AWS access key id", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
                ("a Slack token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
                ("a Google API key", r"\bAIza[0-9A-Za-z_-]{35}"),
                ("a GitLab token", r"\bglpat-[A-Za-z0-9_-]{20,}"),
                ("a private key", r"-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----"),
                ("a JSON Web Token", r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"),
                (
                    "a credential assignment",
                    r#"(?i)\b(?:api[_-]?key|secret|password|passwd|access[_-]?token|auth[_-]?token)\s*[=:]\s*["']?[A-Za-z0-9_\-/+.]{12,}"#,
                ),
            ]),
        }
    })
}

/// What the caller already knows: text it sent or gave, and paths it named.
#[derive(Debug, Clone, Default)]
pub struct Known {
    text: Vec<String>,
    paths: Vec<String>,
    /// Top directories the server's machine has besides the usual ones (`/ci` for a server
    /// started in `/ci/checkout`), each with its trailing `/`.
    machine_roots: Vec<String>,
}

impl Known {
    /// Add text the caller knows; absolute paths in it are remembered as prefixes.
    pub fn add(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        for word in text.split(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '=' | ',')) {
            if word.len() > 1 && (word.starts_with('/') || word.contains(":\\")) {
                self.paths.push(word.trim_end_matches('/').to_string());
            }
        }
        self.text.push(text.to_string());
    }

    /// Remember the top directory of `path`, a directory of the server's machine (the
    /// directory a local server runs in), so that a path under it is found as the machine's
    /// even where it is not one of the usual top directories (`/home`, `/tmp`, ...).
    pub fn add_machine_root(&mut self, path: &std::path::Path) {
        let mut parts = path.components();
        if parts.next() != Some(std::path::Component::RootDir) {
            return;
        }
        if let Some(std::path::Component::Normal(top)) = parts.next() {
            if let Some(top) = top.to_str() {
                let root = format!("/{top}/");
                if !self.machine_roots.contains(&root) {
                    self.machine_roots.push(root);
                }
            }
        }
    }

    /// Add every string (and key) inside a JSON value.
    pub fn add_json(&mut self, value: &serde_json::Value) {
        let mut stack = vec![value];
        while let Some(v) = stack.pop() {
            match v {
                serde_json::Value::String(s) => self.add(s),
                serde_json::Value::Array(items) => stack.extend(items),
                serde_json::Value::Object(map) => {
                    for (key, child) in map {
                        self.add(key);
                        stack.push(child);
                    }
                }
                _ => {}
            }
        }
    }

    fn knows(&self, found: &str) -> bool {
        self.text.iter().any(|t| t.contains(found))
    }

    /// Whether `path` is known, or a JSON Pointer into `sent`.
    fn knows_path(&self, path: &str, sent: Option<&serde_json::Value>) -> bool {
        self.knows(path)
            || sent.is_some_and(|sent| sent.pointer(path).is_some())
            || self
                .paths
                .iter()
                .any(|known| path.starts_with(known.as_str()) || known.starts_with(path))
    }
}

/// How much of a match is quoted.
const EXCERPT: usize = 120;

fn shorten(text: &str) -> String {
    toolschema::text::shorten(text.trim(), EXCERPT)
}

/// The first leak in `text` that the caller does not already know of, `sent` being the
/// arguments of the call: what they hold is known too, and a path that is a JSON Pointer into
/// them names what was sent.
pub fn find(text: &str, known: &Known, sent: Option<&serde_json::Value>) -> Option<Leak> {
    let patterns = patterns();
    // What the caller knows with the arguments added, made only once something that may leak
    // is found: most answers hold nothing of the kind, and a case's arguments can be a 1 MiB
    // string, which every call would otherwise copy and split into words.
    let with_sent = std::cell::OnceCell::new();
    let known_all = || {
        with_sent.get_or_init(|| {
            let mut all = known.clone();
            if let Some(sent) = sent {
                all.add_json(sent);
            }
            all
        })
    };
    for (language, pattern) in &patterns.traces {
        for found in pattern.find_iter(text) {
            if !known_all().knows(found.as_str().trim()) {
                return Some(Leak {
                    kind: LeakKind::StackTrace(language),
                    excerpt: shorten(found.as_str()),
                });
            }
        }
    }
    for (what, pattern) in &patterns.secrets {
        for found in pattern.find_iter(text) {
            if !known_all().knows(found.as_str()) {
                let shown: String = found.as_str().chars().take(8).collect();
                return Some(Leak {
                    kind: LeakKind::Secret(what),
                    excerpt: format!("{shown}…"),
                });
            }
        }
    }
    let usual = patterns.paths.iter().map(|(_, pattern)| (pattern, false));
    // The machine's own top directories matter only once some are known.
    let own = patterns
        .any_path
        .iter()
        .filter(|_| !known.machine_roots.is_empty())
        .map(|pattern| (pattern, true));
    for (pattern, only_own) in usual.chain(own) {
        for captures in pattern.captures_iter(text) {
            let Some(path) = captures.get(1).or_else(|| captures.get(0)) else {
                continue;
            };
            let path = path.as_str().trim_end_matches(['.', '/']);
            let on_machine = !only_own
                || known
                    .machine_roots
                    .iter()
                    .any(|root| path.starts_with(root.as_str()));
            if on_machine && !known_all().knows_path(path, sent) {
                return Some(Leak {
                    kind: LeakKind::Path,
                    excerpt: shorten(path),
                });
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leak(text: &str) -> Option<String> {
        find(text, &Known::default(), None).map(|l| l.describe())
    }

    #[test]
    fn every_pattern_compiles() {
        let p = patterns();
        assert_eq!(
            p.traces.len() + p.paths.len() + p.secrets.len() + usize::from(p.any_path.is_some()),
            PATTERN_COUNT
        );
    }

    #[test]
    fn finds_stack_traces_of_each_language() {
        let cases = [
            ("Error: boom\n    at handler (/srv/app/server.js:12:7)\n    at process (node:internal/x:1:1)", "Node.js"),
            ("Traceback (most recent call last):\n  File \"/app/main.py\", line 3, in <module>", "Python"),
            ("thread 'main' panicked at src/tool.rs:88:5:\nboom", "Rust"),
            ("java.lang.NullPointerException\n\tat com.example.Tool.run(Tool.java:42)", "Java"),
            ("panic: boom\n\ngoroutine 1 [running]:\nmain.main()", "Go"),
        ];
        for (text, language) in cases {
            let found = leak(text).unwrap_or_default();
            assert!(
                found.starts_with(&format!("a {language} stack trace")),
                "{text:?}: {found}"
            );
        }
    }

    #[test]
    fn finds_paths_and_secrets_but_not_urls_or_plain_prose() {
        assert_eq!(
            leak("cannot open /home/ada/.config/app.toml: denied").as_deref(),
            Some("an absolute path of the server's machine: '/home/ada/.config/app.toml'")
        );
        assert!(leak("C:\\Users\\ada\\AppData\\x.txt").is_some());
        // A checkout or virtual environment under /tmp is as much the machine's as one in /home.
        assert_eq!(
            leak("[Errno 36] File name too long: '/tmp/ci/.venv/lib/tzdata/zoneinfo/xx'")
                .as_deref(),
            Some(
                "an absolute path of the server's machine: '/tmp/ci/.venv/lib/tzdata/zoneinfo/xx'"
            )
        );
        assert_eq!(
            leak("key sk-proj-abcdefghijklmnopqrstuvwx0123").as_deref(),
            Some("a secret-shaped token (an OpenAI or Anthropic API key): 'sk-proj-…'")
        );
        assert!(leak("AWS AKIAABCDEFGHIJKLMNOP in use").is_some());
        assert!(leak("password=hunter2hunter2hunter2").is_some());
        for clean in [
            "see https://example.com/home/ada/page for details",
            "missing required argument 'query'",
            "argument 'limit' value must be <= 100 (got 101)",
            "the value /tmp is fine",
            "path must be absolute, like /file.txt",
        ] {
            assert_eq!(leak(clean), None, "{clean}");
        }
    }

    #[test]
    fn what_the_caller_sent_or_gave_is_not_a_leak() {
        let mut known = Known::default();
        known.add("npx -y @modelcontextprotocol/server-filesystem /home/ada/projects");
        known.add_json(
            &serde_json::json!({"path": "/etc/passwd", "token": "sk-abcdefghijklmnopqrstuvwxyz"}),
        );
        assert_eq!(
            find("listing /home/ada/projects/src/main.rs", &known, None),
            None
        );
        assert_eq!(
            find(
                "Access denied: /etc/passwd is outside the allowed directories",
                &known,
                None
            ),
            None
        );
        assert_eq!(
            find("echo: sk-abcdefghijklmnopqrstuvwxyz", &known, None),
            None
        );
        assert!(find("config read from /home/bob/.env", &known, None).is_some());
    }

    #[test]
    fn a_path_under_the_top_directory_the_server_runs_in_is_the_machines() {
        let text = "[Errno 36] File name too long: '/build/ci/.venv/lib/tzdata/zoneinfo/xx'";
        // `/build` is not a usual top directory: unknown, the path is passed over.
        assert_eq!(leak(text), None);
        let mut known = Known::default();
        known.add_machine_root(std::path::Path::new("/build/ci"));
        known.add_machine_root(std::path::Path::new("relative/dir"));
        known.add_machine_root(std::path::Path::new("/"));
        assert_eq!(known.machine_roots, ["/build/"]);
        assert_eq!(
            find(text, &known, None).map(|l| l.describe()).as_deref(),
            Some("an absolute path of the server's machine: '/build/ci/.venv/lib/tzdata/zoneinfo/xx'")
        );
        // Another top directory, a lone top directory and a URL are not the machine's.
        for clean in [
            "see /api/v1/users",
            "the value /build is fine",
            "see https://example.com/build/x/y",
        ] {
            assert_eq!(find(clean, &known, None), None, "{clean}");
        }
        // What the caller named is still known.
        known.add("/build/ci/data");
        assert_eq!(find("reading /build/ci/data/a.txt", &known, None), None);
    }

    #[test]
    fn a_pointer_into_the_arguments_is_not_a_leak() {
        let mut known = Known::default();
        let sent = serde_json::json!({"app": {"name": 0}, "root": {"children": [{"x": 1}]}});
        known.add_json(&sent);
        for answer in [
            "invalid arguments: /app/name must be string",
            "invalid arguments: /root/children/0 must have required property 'id'",
        ] {
            assert_eq!(find(answer, &known, Some(&sent)), None, "{answer}");
        }
        // A path of the machine that only starts like one is still found.
        assert!(find("cannot open /app/config/secrets.toml", &known, Some(&sent)).is_some());
    }
}
