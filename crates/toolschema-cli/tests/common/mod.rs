//! Shared pieces of the tests that run real processes: where the interop installs are, a
//! line-oriented session with a child process, and timeouts on everything spawned.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

pub mod http;

use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// How long a test waits for any one message or exit.
pub const WAIT: Duration = Duration::from_secs(20);

/// The workspace root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .unwrap()
        .to_path_buf()
}

/// The `toolschema` binary under test.
pub fn toolschema() -> &'static str {
    env!("CARGO_BIN_EXE_toolschema")
}

/// A file the test command installs or the repository holds; fails with what to run if missing.
pub fn require(relative: &str) -> PathBuf {
    let path = root().join(relative);
    assert!(
        path.exists(),
        "{} is missing: run ./scripts/test.sh, which installs the interop servers and clients (npm ci in interop/, .venv with interop/requirements.txt)",
        path.display()
    );
    path
}

/// `node` (from PATH).
pub fn node() -> String {
    let found = Command::new("node")
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    assert!(
        found,
        "node is not on PATH: the interop tests need Node.js (see the README)"
    );
    "node".into()
}

/// The command that starts the recording server, recording into `record`.
pub fn recording_server(record: &Path, extra: &[&str]) -> Vec<String> {
    let script = require("interop/recording-server.mjs");
    let mut command = vec![
        node(),
        script.display().to_string(),
        "--record".into(),
        record.display().to_string(),
    ];
    command.extend(extra.iter().map(|s| s.to_string()));
    command
}

/// The command that starts the scripted server (interop/scripted-server.mjs) with `script`
/// (JSON), recording what it receives into `record` and its verdict on each call into
/// `verdicts`.
pub fn scripted_server(record: &Path, verdicts: &Path, script: &str) -> Vec<String> {
    let script_path = require("interop/scripted-server.mjs");
    vec![
        node(),
        script_path.display().to_string(),
        "--record".into(),
        record.display().to_string(),
        "--verdicts".into(),
        verdicts.display().to_string(),
        "--script".into(),
        script.to_string(),
    ]
}

/// A server with one tool, `greet`, whose description is the JSON text in the file its
/// command line names, put into its `tools/list` answer as it is written there (a lone
/// surrogate escape stays an escape): a test changes what the server lists under the same
/// command line.
const DESCRIBED_SERVER: &str = r#"
const fs = require("fs");
const file = process.argv[1];
const rl = require("readline").createInterface({ input: process.stdin });
const send = (text) => process.stdout.write(text + "\n");
rl.on("line", (line) => {
  const m = JSON.parse(line);
  const id = JSON.stringify(m.id);
  if (m.method === "initialize") {
    send(`{"jsonrpc":"2.0","id":${id},"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"described","version":"1"}}}`);
  } else if (m.method === "tools/list") {
    const description = fs.readFileSync(file, "utf8").trim();
    send(`{"jsonrpc":"2.0","id":${id},"result":{"tools":[{"name":"greet","description":${description},"inputSchema":{"type":"object"}}]}}`);
  } else if (m.method === "tools/call") {
    send(`{"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":"hi"}]}}`);
  } else if (m.id !== undefined) {
    send(`{"jsonrpc":"2.0","id":${id},"result":{}}`);
  }
});
"#;

/// The command that starts [`DESCRIBED_SERVER`] with the description in `file`.
pub fn described_server(file: &Path) -> Vec<String> {
    vec![
        node(),
        "-e".into(),
        DESCRIBED_SERVER.into(),
        file.display().to_string(),
    ]
}

/// A FIFO whose reader opens it (so that a writer's open returns) and then reads nothing
/// until it is told to: a log shipper that stalls.
pub struct StalledFifo {
    /// The FIFO.
    pub path: PathBuf,
    go: mpsc::Sender<()>,
    reader: thread::JoinHandle<String>,
}

impl StalledFifo {
    /// Make the FIFO at `path` and its reader.
    pub fn new(path: &Path) -> StalledFifo {
        let made = Command::new("mkfifo").arg(path).status().unwrap();
        assert!(made.success(), "mkfifo {}", path.display());
        let (go, may_read) = mpsc::channel::<()>();
        let fifo = path.to_path_buf();
        let reader = thread::spawn(move || {
            // Opened as the writer opens it, then not read until told.
            let mut file = std::fs::File::open(&fifo).unwrap();
            may_read.recv().unwrap();
            let mut text = String::new();
            file.read_to_string(&mut text).unwrap();
            text
        });
        StalledFifo {
            path: path.to_path_buf(),
            go,
            reader,
        }
    }

    /// Let the reader read, to the end of what is written.
    pub fn start_reading(&self) {
        self.go.send(()).unwrap();
    }

    /// Everything the reader read, once the writer closed the FIFO.
    pub fn text(self) -> String {
        let _ = self.go.send(());
        self.reader.join().unwrap()
    }
}

/// The lines the recording server received, parsed.
pub fn recorded(record: &Path) -> Vec<Value> {
    recorded_lines(record)
        .iter()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

/// The lines the recording server received, as received.
pub fn recorded_lines(record: &Path) -> Vec<String> {
    std::fs::read_to_string(record)
        .unwrap_or_default()
        .lines()
        .map(String::from)
        .collect()
}

/// A running child process spoken to line by line, with its stderr collected. Killed on drop.
pub struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: Arc<Mutex<String>>,
    /// Disconnected when the stderr reader has reached end of file.
    stderr_done: Receiver<()>,
}

impl Session {
    /// Start `program args` with piped stdio.
    pub fn start(program: &str, args: &[String]) -> Session {
        Session::spawn(Command::new(program).args(args), program)
    }

    /// Start `program args` in directory `dir`, with piped stdio.
    pub fn start_in(dir: &Path, program: &str, args: &[String]) -> Session {
        Session::spawn(Command::new(program).args(args).current_dir(dir), program)
    }

    fn spawn(command: &mut Command, program: &str) -> Session {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {program}: {e}"));
        let stdout = child.stdout.take().unwrap();
        let (sender, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut err = child.stderr.take().unwrap();
        let collected = stderr.clone();
        // Dropped when the reader has read everything: `wait` waits for that, not for a while.
        let (stderr_open, stderr_done) = mpsc::channel::<()>();
        thread::spawn(move || {
            let _open = stderr_open;
            let mut buffer = [0u8; 4096];
            while let Ok(n) = err.read(&mut buffer) {
                if n == 0 {
                    break;
                }
                collected
                    .lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buffer[..n]));
            }
        });
        let stdin = child.stdin.take();
        Session {
            child,
            stdin,
            lines,
            stderr,
            stderr_done,
        }
    }

    /// `toolschema proxy ARGS -- SERVER...`.
    pub fn proxy(args: &[&str], server: &[String]) -> Session {
        let mut all: Vec<String> = vec!["proxy".into()];
        all.extend(args.iter().map(|s| s.to_string()));
        all.push("--".into());
        all.extend(server.iter().cloned());
        Session::start(toolschema(), &all)
    }

    /// Send one line (a newline is added).
    pub fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin already closed");
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// Send raw bytes as they are.
    pub fn send_bytes(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin already closed");
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    /// The next line of output, or a failure naming what was expected and the stderr so far.
    pub fn recv_line(&mut self) -> String {
        self.recv_line_within(WAIT)
    }

    /// [`Session::recv_line`], waiting up to `wait` (for a program that starts servers first).
    pub fn recv_line_within(&mut self, wait: Duration) -> String {
        match self.lines.recv_timeout(wait) {
            Ok(line) => line,
            Err(RecvTimeoutError::Timeout) => {
                panic!("no output within {wait:?}; stderr:\n{}", self.stderr())
            }
            Err(RecvTimeoutError::Disconnected) => panic!(
                "output ended while a line was expected; stderr:\n{}",
                self.stderr()
            ),
        }
    }

    /// The next line of output, parsed.
    pub fn recv(&mut self) -> Value {
        let line = self.recv_line();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    /// The next message that is not a notification.
    pub fn recv_reply(&mut self) -> Value {
        loop {
            let message = self.recv();
            if message.get("id").is_some() {
                return message;
            }
        }
    }

    /// Whether more output arrives within `wait`.
    pub fn quiet_for(&mut self, wait: Duration) -> Option<String> {
        self.lines.recv_timeout(wait).ok()
    }

    /// Initialize through the session and return the initialize response.
    pub fn initialize(&mut self) -> Value {
        self.send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}"#);
        let reply = self.recv_reply();
        self.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        reply
    }

    /// Close the child's stdin.
    pub fn close_stdin(&mut self) {
        self.stdin.take();
    }

    /// Wait for the child to exit (killing it after [`WAIT`]), with its stderr.
    pub fn wait(&mut self) -> (ExitStatus, String) {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                // The reader ends at end of file, once every process holding the pipe is gone.
                let _ = self.stderr_done.recv_timeout(WAIT);
                return (status, self.stderr());
            }
            if start.elapsed() > WAIT {
                let _ = self.child.kill();
                panic!(
                    "the process did not exit within {WAIT:?}; stderr:\n{}",
                    self.stderr()
                );
            }
            thread::sleep(Duration::from_millis(10));
        }
    }

    /// Wait until stderr holds a whole first line, and return it.
    pub fn first_stderr_line(&self) -> String {
        let start = Instant::now();
        loop {
            if let Some((line, _)) = self.stderr().split_once('\n') {
                return line.to_string();
            }
            if start.elapsed() > WAIT {
                panic!("nothing on stderr within {WAIT:?}");
            }
            thread::sleep(Duration::from_millis(10));
        }
    }

    /// The stderr collected so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Run a command to completion with a time limit; returns status, stdout, stderr.
pub fn run(program: &str, args: &[String], limit: Duration) -> (ExitStatus, String, String) {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {program}: {e}"));
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let err = thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "{program} {args:?} did not finish within {limit:?}; stderr:\n{}",
                err.join().unwrap()
            );
        }
        thread::sleep(Duration::from_millis(10));
    };
    (status, out.join().unwrap(), err.join().unwrap())
}

/// Whether a process with this id is still alive (not a zombie).
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

/// A server listening on a loopback port, which it reports on stderr as "listening on port N";
/// killed on drop.
pub struct HttpServer {
    child: Child,
    /// The port it listens on.
    pub port: u16,
}

impl HttpServer {
    /// Start `command` and wait until it says which port it listens on.
    pub fn start(command: &mut Command) -> HttpServer {
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let (ready, listening) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if let Some((_, port)) = line.rsplit_once("listening on port ") {
                    let _ = ready.send(port.trim().parse::<u16>().unwrap());
                }
            }
        });
        match listening.recv_timeout(WAIT) {
            Ok(port) => HttpServer { child, port },
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("{command:?} did not start listening");
            }
        }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What a finished `toolschema` run left: exit code and output.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Run `toolschema ARGS` in `dir`, with `stdin` as its standard input.
pub fn toolschema_in(dir: &Path, args: &[&str], stdin: Option<&str>) -> Run {
    let mut cmd = assert_cmd::Command::cargo_bin("toolschema").unwrap();
    cmd.current_dir(dir)
        .args(args)
        .timeout(Duration::from_secs(60));
    if let Some(input) = stdin {
        cmd.write_stdin(input);
    }
    let output = cmd.output().unwrap();
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8(output.stdout).unwrap(),
        stderr: String::from_utf8(output.stderr).unwrap(),
    }
}

/// A program from a Debian package that scripts/test.sh installs (`package`), found on PATH; the
/// test fails saying how to install it, never skips.
pub fn debian_program(name: &str, package: &str) -> String {
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
        .map(|path| path.display().to_string())
        .unwrap_or_else(|| {
            panic!(
                "{name} is not on PATH: install Debian's {package} package (apt-get install -y --no-install-recommends {package}), as scripts/test.sh does"
            )
        })
}

/// The address the proxy says its metrics listener is at, from its stderr.
pub fn metrics_base(process: &Session) -> String {
    let mut base = None;
    http::eventually(WAIT, || {
        base = process
            .stderr()
            .split("metrics at ")
            .nth(1)
            .and_then(|rest| rest.split_once('\n'))
            .map(|(url, _)| url.trim().trim_end_matches("/metrics").to_string());
        base.is_some()
    });
    base.unwrap_or_else(|| panic!("no metrics listener: {}", process.stderr()))
}
