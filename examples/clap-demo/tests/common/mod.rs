//! Running processes from tests: every process gets a deadline and is killed when it passes.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What a finished process printed and how it exited.
#[derive(Debug)]
pub struct Finished {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

/// The clap-demo binary cargo built for these tests.
pub fn demo() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_clap-demo"))
}

/// The workspace root.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Run `command` with no standard input, killing it if it is still running after `limit`.
pub fn run(mut command: Command, limit: Duration) -> Finished {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().expect("cannot start the process");
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out_reader = std::thread::spawn(move || {
        let mut text = String::new();
        out.read_to_string(&mut text).unwrap();
        text
    });
    let err_reader = std::thread::spawn(move || {
        let mut text = String::new();
        err.read_to_string(&mut text).unwrap();
        text
    });
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!(
                "{command:?} did not finish within {limit:?}; stderr so far: {}",
                err_reader.join().unwrap()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Finished {
        code: status.code(),
        stdout: out_reader.join().unwrap(),
        stderr: err_reader.join().unwrap(),
    }
}

/// The Node.js interop client script, checking that `./scripts/test.sh` installed its packages.
pub fn node_client() -> PathBuf {
    let interop = workspace().join("interop");
    assert!(
        interop
            .join("node_modules/@modelcontextprotocol/sdk/package.json")
            .exists(),
        "the TypeScript MCP SDK is not installed in interop/node_modules: run ./scripts/test.sh \
         (or `npm ci` in interop/)"
    );
    interop.join("clap-demo-client.mjs")
}

/// A `clap-demo mcp stream` running in the background, its standard error collected.
pub struct StreamServer {
    child: std::process::Child,
    stderr: std::sync::Arc<std::sync::Mutex<String>>,
    reader: Option<std::thread::JoinHandle<()>>,
    /// The endpoint, `http://ADDRESS/mcp`.
    pub url: String,
}

impl StreamServer {
    /// Start `clap-demo mcp stream ARGS...` in `dir` and wait (at most 30 s) until it has said
    /// where it serves and how clients authenticate.
    pub fn start(dir: &Path, args: &[&str]) -> StreamServer {
        use std::io::BufRead;
        let mut child = Command::new(demo())
            .args(["mcp", "stream"])
            .args(args)
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("cannot start clap-demo");
        let stderr = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let (found, address) = std::sync::mpsc::channel();
        let pipe = child.stderr.take().unwrap();
        let collected = stderr.clone();
        let reader = std::thread::spawn(move || {
            let mut url = None;
            for line in std::io::BufReader::new(pipe).lines() {
                let Ok(line) = line else { break };
                if let Some(address) = line.strip_prefix("serving MCP at ") {
                    url = Some(address.to_string());
                }
                let ready = line.starts_with("authentication: ");
                let mut text = collected.lock().unwrap();
                text.push_str(&line);
                text.push('\n');
                if ready {
                    if let Some(url) = url.take() {
                        let _ = found.send(url);
                    }
                }
            }
        });
        let url = match address.recv_timeout(Duration::from_secs(30)) {
            Ok(url) => url,
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "clap-demo mcp stream did not start: {}",
                    stderr.lock().unwrap()
                );
            }
        };
        StreamServer {
            child,
            stderr,
            reader: Some(reader),
            url,
        }
    }

    /// What it wrote to standard error so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Stop it with SIGTERM (killed after 10 s) and return its exit code and standard error.
    pub fn stop(mut self) -> (Option<i32>, String) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(10);
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > deadline {
                self.child.kill().unwrap();
                break self.child.wait().unwrap();
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        if let Some(reader) = self.reader.take() {
            reader.join().unwrap();
        }
        (status.code(), self.stderr())
    }
}

impl Drop for StreamServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The interop folder, checking that `./scripts/test.sh` installed `package` there.
pub fn interop_package(package: &str) -> PathBuf {
    let interop = workspace().join("interop");
    assert!(
        interop.join("node_modules").join(package).exists(),
        "{package} is not installed in interop/node_modules: run ./scripts/test.sh (or `npm ci` in interop/)"
    );
    interop
}
