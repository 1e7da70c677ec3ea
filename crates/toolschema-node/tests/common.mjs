// What the Node module's tests share. They run from a folder where the packed npm tarballs are
// installed (scripts/test-packages.sh), so "toolschema" is the installed package and the
// reference command is the installed binary.
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";

const require = createRequire(path.join(process.cwd(), "package.json"));

let binary;

/**
 * The installed command: the platform package's binary (the reference of every verdict), found
 * as the installed launcher finds it. It is run directly, not through node_modules/.bin: each
 * run of the launcher starts a Node process first, and the suite runs the command hundreds of
 * times. The launcher itself is tested by its own tests and by the quick start through npx.
 */
export function command() {
  if (binary) return binary;
  const launcher = path.join(process.cwd(), "node_modules", "toolschema", "bin", "toolschema.js");
  if (!fs.existsSync(launcher)) throw new Error(`no installed toolschema at ${launcher}: run from the npm project`);
  const key = require(launcher).platformKey();
  if (!key) throw new Error(`no npm platform package for ${process.platform}-${process.arch}`);
  const manifest = createRequire(launcher).resolve(`@toolschema/cli-${key}/package.json`);
  const found = path.join(path.dirname(manifest), process.platform === "win32" ? "toolschema.exe" : "toolschema");
  if (!fs.existsSync(found)) throw new Error(`@toolschema/cli-${key} has no binary at ${found}`);
  binary = found;
  return binary;
}

/** Run the command; {code, stdout, stderr}. */
export function run(args, options = {}) {
  const done = spawnSync(command(), args, { encoding: "utf8", maxBuffer: 1 << 28, ...options });
  if (done.error) throw done.error;
  return { code: done.status, stdout: done.stdout, stderr: done.stderr };
}

/** A fresh temporary folder. */
export function scratch() {
  return fs.mkdtempSync(path.join(os.tmpdir(), "toolschema-node-test-"));
}

/** target/test-data of the checkout (TOOLSCHEMA_TEST_DATA). */
export function testData() {
  const dir = process.env.TOOLSCHEMA_TEST_DATA;
  if (!dir || !fs.existsSync(dir)) throw new Error("TOOLSCHEMA_TEST_DATA is not set to target/test-data");
  return dir;
}

/** Where the installed package resolves from (never the checkout). */
export function installedAt(specifier) {
  return require.resolve(specifier);
}

export { execFileSync };
