// The npm launcher as a user meets it: `node bin/toolschema.js ...` in a node_modules tree
// whose platform package holds a stand-in binary (a small Node script), so that what the
// launcher does with arguments, streams, exit codes and signals is seen from both sides.
// The installed package with the real binary is tested by scripts/test-packages.sh.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const packageDir = path.resolve(here, "..");
const require = createRequire(import.meta.url);
const { PLATFORMS, platformKey } = require("../bin/toolschema.js");

// A node_modules tree: toolschema (this launcher) and, unless `withPlatform` is false,
// @toolschema/cli-<this platform> whose binary is `binarySource`.
function install(binarySource, { withPlatform = true } = {}) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "toolschema-launcher-"));
  const launcherDir = path.join(root, "node_modules", "toolschema");
  fs.mkdirSync(path.join(launcherDir, "bin"), { recursive: true });
  fs.copyFileSync(path.join(packageDir, "package.json"), path.join(launcherDir, "package.json"));
  fs.copyFileSync(path.join(packageDir, "bin", "toolschema.js"), path.join(launcherDir, "bin", "toolschema.js"));
  if (withPlatform) {
    const key = platformKey();
    assert.ok(key, `no npm platform package is declared for ${process.platform}-${process.arch}`);
    const dir = path.join(root, "node_modules", "@toolschema", `cli-${key}`);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: `@toolschema/cli-${key}`, version: "0.0.0" }));
    const binary = path.join(dir, "toolschema");
    fs.writeFileSync(binary, `#!${process.execPath}\n${binarySource}\n`);
    fs.chmodSync(binary, 0o755);
  }
  return { root, launcher: path.join(launcherDir, "bin", "toolschema.js") };
}

// The environment without an override, so that the platform package is what is found.
function env() {
  const e = { ...process.env };
  delete e.TOOLSCHEMA_BINARY;
  return e;
}

function run(launcher, args, options = {}) {
  return spawnSync(process.execPath, [launcher, ...args], { env: env(), ...options });
}

test("the binary's exit code is the launcher's: 0, 1 and 2", () => {
  const { launcher } = install("process.exit(Number(process.argv[2]));");
  for (const code of [0, 1, 2]) {
    const r = run(launcher, [String(code)]);
    assert.equal(r.status, code, `exit ${code}: stderr ${r.stderr}`);
    assert.equal(r.signal, null);
  }
});

test("arguments reach the binary untouched", () => {
  const { launcher } = install(
    "process.stdout.write(JSON.stringify(process.argv.slice(2)));",
  );
  const args = ["lint", "", "two words", "--format=github", "-", "--", "ünïcödé ✓", "quote\"d", "$HOME", "*.json", "a\nb"];
  const r = run(launcher, args, { encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), args);
});

test("stdin goes to the binary and its stdout and stderr come back byte for byte", () => {
  const { launcher } = install(
    "const c = []; process.stdin.on('data', d => c.push(d)); process.stdin.on('end', () => { const b = Buffer.concat(c); process.stdout.write(b); process.stderr.write(Buffer.from(b).reverse()); });",
  );
  // Not UTF-8 (a lone 0xff, a NUL, a split multibyte sequence), and larger than a pipe's buffer.
  const chunk = Buffer.from([0xff, 0x00, 0xe2, 0x82, 0x0a, 0x7b, 0x22]);
  const input = Buffer.concat(Array.from({ length: 40000 }, () => chunk));
  const r = run(launcher, [], { input, maxBuffer: 64 * 1024 * 1024 });
  assert.equal(r.status, 0, String(r.stderr).slice(0, 500));
  assert.ok(r.stdout.equals(input), "stdout differs from stdin");
  assert.ok(r.stderr.equals(Buffer.from(input).reverse()), "stderr differs");
});

// Starts the launcher over a binary that records the signal it receives in `mark`, waits until
// the binary runs, sends `signal` to the launcher only (not its group), and returns how the
// launcher ended.
async function signalled(binarySource, signal) {
  const { root, launcher } = install(binarySource);
  const mark = path.join(root, "signal.txt");
  const child = spawn(process.execPath, [launcher, mark], { env: env(), stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  await new Promise((resolve, reject) => {
    child.stdout.on("data", (d) => {
      stdout += d;
      if (stdout.includes("ready")) resolve();
    });
    child.on("exit", () => reject(new Error(`ended before ready: ${stderr}`)));
  });
  child.kill(signal);
  const [code, sig] = await new Promise((resolve) => child.on("exit", (c, s) => resolve([c, s])));
  return { code, sig, seen: fs.existsSync(mark) ? fs.readFileSync(mark, "utf8") : null, stderr };
}

test("SIGINT sent to the launcher reaches the binary, whose exit code is returned", async () => {
  const r = await signalled(
    "const fs = require('fs'); process.on('SIGINT', () => { fs.writeFileSync(process.argv[2], 'SIGINT'); process.exit(130); }); console.log('ready'); setInterval(() => {}, 1000);",
    "SIGINT",
  );
  assert.equal(r.seen, "SIGINT", r.stderr);
  assert.equal(r.code, 130);
  assert.equal(r.sig, null);
});

test("SIGTERM is forwarded, and a binary killed by it kills the launcher by it", async () => {
  const r = await signalled(
    "const fs = require('fs'); process.on('SIGTERM', () => { fs.writeFileSync(process.argv[2], 'SIGTERM'); process.removeAllListeners('SIGTERM'); process.kill(process.pid, 'SIGTERM'); }); console.log('ready'); setInterval(() => {}, 1000);",
    "SIGTERM",
  );
  assert.equal(r.seen, "SIGTERM", r.stderr);
  assert.equal(r.sig, "SIGTERM", `launcher ended with code ${r.code}, not the signal`);
});

test("a platform whose package is not installed: says which package and how else to install", () => {
  const { launcher } = install("", { withPlatform: false });
  const r = run(launcher, ["--version"], { encoding: "utf8" });
  assert.equal(r.status, 1);
  assert.equal(r.stdout, "");
  assert.match(r.stderr, new RegExp(`\\(@toolschema/cli-${platformKey()}\\) is not installed`));
  assert.match(r.stderr, /npm install @toolschema\/cli-/);
  assert.match(r.stderr, /pip install toolschema/);
  assert.match(r.stderr, /cargo install toolschema-cli/);
});

test("a platform with no package at all: lists the platforms that have one and the other ways", () => {
  const { root, launcher } = install("process.exit(0);");
  // The launcher as it runs on a machine of another kind: Node reporting another CPU.
  const preload = path.join(root, "riscv.cjs");
  fs.writeFileSync(preload, "Object.defineProperty(process, 'arch', { value: 'riscv64' });");
  const r = spawnSync(process.execPath, ["--require", preload, launcher, "lint", "tools.json"], { env: env(), encoding: "utf8" });
  assert.equal(r.status, 1);
  assert.match(r.stderr, /no npm package of toolschema for this platform: linux-riscv64|no npm package of toolschema for this platform: \w+-riscv64/);
  for (const key of Object.keys(PLATFORMS)) assert.ok(r.stderr.includes(key), `${key} not listed: ${r.stderr}`);
  assert.match(r.stderr, /pip install toolschema/);
  assert.match(r.stderr, /cargo install toolschema-cli/);
});

test("every declared platform is an optional dependency with the same version", () => {
  const manifest = JSON.parse(fs.readFileSync(path.join(packageDir, "package.json"), "utf8"));
  const declared = Object.keys(manifest.optionalDependencies).sort();
  assert.deepEqual(declared, Object.keys(PLATFORMS).map((k) => `@toolschema/cli-${k}`).sort());
  for (const v of Object.values(manifest.optionalDependencies)) assert.equal(v, manifest.version);
});
