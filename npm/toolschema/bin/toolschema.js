#!/usr/bin/env node
// The `toolschema` command of the npm package: finds the binary of this platform's package
// (@toolschema/cli-<platform>, an optional dependency) and runs it. Arguments and the three
// streams pass through untouched (the child inherits them); the exit code is the binary's, and
// a signal that ends the binary ends this process the same way.
"use strict";

const { spawn } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");

// One package per platform. Only the linux-x64-gnu package is built by this repository's
// scripts/package.sh today; the others are declared so that a release built on those machines
// fills them in.
const PLATFORMS = {
  "linux-x64-gnu": { os: "linux", cpu: "x64", libc: "glibc" },
  "linux-arm64-gnu": { os: "linux", cpu: "arm64", libc: "glibc" },
  "linux-x64-musl": { os: "linux", cpu: "x64", libc: "musl" },
  "linux-arm64-musl": { os: "linux", cpu: "arm64", libc: "musl" },
  "darwin-x64": { os: "darwin", cpu: "x64" },
  "darwin-arm64": { os: "darwin", cpu: "arm64" },
  "win32-x64-msvc": { os: "win32", cpu: "x64" },
  "win32-arm64-msvc": { os: "win32", cpu: "arm64" },
};

const OTHER_WAYS =
  "Other ways to install toolschema:\n" +
  "  pip install toolschema        (or: uvx toolschema, pipx run toolschema)\n" +
  "  cargo install toolschema-cli  (builds from source; needs Rust)";

// glibc or musl: Node's own report says which C library it runs on (no `ldd` needed).
function libc() {
  if (process.platform !== "linux") return undefined;
  try {
    const header = process.report.getReport().header;
    return header.glibcVersionRuntime ? "glibc" : "musl";
  } catch {
    return "glibc";
  }
}

function platformKey() {
  const c = libc();
  for (const [key, p] of Object.entries(PLATFORMS)) {
    if (p.os === process.platform && p.cpu === process.arch && p.libc === c) return key;
  }
  return null;
}

function fail(message) {
  process.stderr.write(`toolschema: ${message}\n`);
  process.exit(1);
}

function findBinary() {
  // An explicit binary wins: a build of one's own, or a platform without a package.
  if (process.env.TOOLSCHEMA_BINARY) return process.env.TOOLSCHEMA_BINARY;
  const here = `${process.platform}-${process.arch}${libc() ? ` (${libc()})` : ""}`;
  const key = platformKey();
  if (!key) {
    fail(
      `there is no npm package of toolschema for this platform: ${here}.\n` +
        `Packages exist for: ${Object.keys(PLATFORMS).join(", ")}.\n` +
        `${OTHER_WAYS}\n` +
        "Or point TOOLSCHEMA_BINARY at a toolschema binary you built.",
    );
  }
  const name = `@toolschema/cli-${key}`;
  let dir;
  try {
    dir = path.dirname(require.resolve(`${name}/package.json`));
  } catch {
    fail(
      `the package for this platform (${name}) is not installed.\n` +
        "It is an optional dependency of toolschema: install without --omit=optional / " +
        "--no-optional, or add it yourself:\n" +
        `  npm install ${name}\n` +
        OTHER_WAYS,
    );
  }
  const binary = path.join(dir, process.platform === "win32" ? "toolschema.exe" : "toolschema");
  if (!fs.existsSync(binary)) fail(`${name} is installed but has no binary at ${binary}`);
  return binary;
}

function main() {
  const binary = findBinary();
  const child = spawn(binary, process.argv.slice(2), { stdio: "inherit", windowsHide: false });

  // Forwarded, not acted on: the binary decides what a signal means (the proxy drains, lint
  // stops). A terminal's Ctrl-C reaches both processes (same process group); `kill PID` of
  // this one reaches only it, hence the forwarding.
  const forwarded = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"];
  const handlers = forwarded.map((signal) => {
    const handler = () => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    };
    process.on(signal, handler);
    return [signal, handler];
  });

  child.on("error", (error) => fail(`could not run ${binary}: ${error.message}`));
  child.on("exit", (code, signal) => {
    if (signal) {
      // Die the way the binary died, so that a caller (a shell, make, CI) sees the signal.
      for (const [s, h] of handlers) process.removeListener(s, h);
      process.kill(process.pid, signal);
      // A signal this process cannot die of (ignored, or on Windows): 128 + its number.
      const number = require("node:os").constants.signals[signal] || 0;
      process.exit(128 + number);
    }
    process.exit(code === null ? 1 : code);
  });
}

if (require.main === module) {
  main();
} else {
  // Read by the tests (and by anyone asking which package this machine needs).
  module.exports = { PLATFORMS, platformKey };
}
