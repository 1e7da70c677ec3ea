// What the Node module's tests share. They run from a folder where the packed npm tarballs are
// installed (scripts/test-packages.sh), so "toolschema" is the installed package and the
// reference command is the installed binary.
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";

const require = createRequire(path.join(process.cwd(), "package.json"));

/** The installed command: the platform package's binary (the reference of every verdict). */
export function command() {
  const bin = path.join(process.cwd(), "node_modules", ".bin", "toolschema");
  if (!fs.existsSync(bin)) throw new Error(`no installed toolschema at ${bin}: run from the npm project`);
  return bin;
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
