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
