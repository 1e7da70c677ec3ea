#!/usr/bin/env node
// Costs of hostile but valid inputs (scripts/bench-hostile.sh; the test command runs it only with --smoke):
//
//   1. a 1.75 MB tools/call with 8,000 undeclared arguments against a closed 200-argument tool,
//      through `toolschema proxy`: time to its answer, the proxy's CPU time for it, and how long
//      a ping sent right behind it waits;
//   2. the same arguments checked by `toolschema validate --tool wide --args @FILE`;
//   3. the proxy's memory after a client listed 5,000 tools 100 times without calling any.
//
//   node bench-hostile.mjs TOOLSCHEMA_BINARY [--arguments N] [--tools N] [--listings N]
//
// The defaults are the figures above. It exits 1 when the proxy or `validate` lets the call
// through, or a listing does not hold every tool.

import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { readLines } from "./stdio-lines.mjs";
import { numberOption } from "./bench-options.mjs";

const [binary, ...rest] = process.argv.slice(2);
if (!binary) {
  console.error("usage: node bench-hostile.mjs TOOLSCHEMA_BINARY [--arguments N] [--tools N] [--listings N]");
  process.exit(2);
}
const option = (name, fallback) => numberOption(rest, name, fallback);
const argumentCount = option("--arguments", 8000);
const toolCount = option("--tools", 5000);
const listingCount = option("--listings", 100);
// recording-server.mjs lists 10 tools of its own before its extra ones.
const baseTools = 10;
if (toolCount < baseTools) {
  console.error(`--tools must be at least ${baseTools}`);
  process.exit(2);
}
const server = fileURLToPath(new URL("./recording-server.mjs", import.meta.url));

// CPU time the process has used so far, in milliseconds: every thread, user and system.
function cpuMs(pid) {
  let ns = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    ns += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ")[0]);
  }
  return ns / 1e6;
}

function memoryMiB(pid) {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = (name) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)[1]);
  return { rss: kib("VmRSS") / 1024, peak: kib("VmHWM") / 1024 };
}

// A process spoken to in JSON lines; `reply(id)` resolves with the answer to request `id`.
function session(command, args) {
  const child = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
  const waiting = new Map();
  readLines(child.stdout, (line) => {
    const message = JSON.parse(line);
    const resolve = waiting.get(JSON.stringify(message.id));
    if (resolve) {
      waiting.delete(JSON.stringify(message.id));
      resolve(message);
    }
  });
  return {
    pid: child.pid,
    send: (message) => child.stdin.write(JSON.stringify(message) + "\n"),
    reply: (id) => new Promise((resolve) => waiting.set(JSON.stringify(id), resolve)),
    async request(id, method, params) {
      const answer = this.reply(id);
      this.send({ jsonrpc: "2.0", id, method, params });
      return answer;
    },
    async initialize() {
      await this.request(0, "initialize", {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "bench-hostile", version: "1" },
      });
      this.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    },
    close: () => {
      child.stdin.end();
      return new Promise((resolve) => child.on("exit", resolve));
    },
  };
}

// 8,000 undeclared arguments (by default) with 210-character names: 1.75 MB of JSON.
const wideArguments = {};
for (let i = 0; i < argumentCount; i++) {
  wideArguments[`undeclared_argument_${String(i).padStart(5, "0")}_`.padEnd(210, "x")] = "v";
}
const callBytes = JSON.stringify({
  jsonrpc: "2.0",
  id: 2,
  method: "tools/call",
  params: { name: "wide", arguments: wideArguments },
}).length;

async function largeCall() {
  const proxy = session(binary, ["proxy", "--", "node", server, "--wide-tool", "200"]);
  await proxy.initialize();
  await proxy.request(1, "tools/list", {});
  // The tool is compiled on its first call; a small valid call takes that out of the figure.
  await proxy.request(10, "tools/call", { name: "wide", arguments: { field_0: "x" } });
  const cpuBefore = cpuMs(proxy.pid);
  const start = performance.now();
  const answer = proxy.reply(2);
  const pong = proxy.reply(3);
  proxy.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "wide", arguments: wideArguments } });
  proxy.send({ jsonrpc: "2.0", id: 3, method: "ping" });
  const [reply, pingMs] = await Promise.all([
    answer.then((r) => ({ r, ms: performance.now() - start })),
    pong.then(() => performance.now() - start),
  ]);
  const cpu = cpuMs(proxy.pid) - cpuBefore;
  const lines = reply.r.result?.content?.[0]?.text?.split("\n").length ?? 0;
  await proxy.close();
  return { answerMs: reply.ms, pingMs, cpuMs: cpu, lines, refused: reply.r.result?.isError === true };
}

function validateCall() {
  const dir = mkdtempSync(join(tmpdir(), "bench-hostile-"));
  const properties = {};
  for (let i = 0; i < 200; i++) properties[`field_${i}`] = { type: "string" };
  const catalog = join(dir, "catalog.json");
  writeFileSync(
    catalog,
    JSON.stringify({ tools: [{ name: "wide", inputSchema: { type: "object", properties, additionalProperties: false } }] }),
  );
  const args = join(dir, "args.json");
  writeFileSync(args, JSON.stringify(wideArguments));
  const quoted = (s) => `'${s.replaceAll("'", "'\\''")}'`;
  const run = spawnSync(
    "bash",
    ["-c", `TIMEFORMAT='%R %U %S'; time ${quoted(binary)} validate ${quoted(catalog)} --tool wide --args @${quoted(args)} > /dev/null`],
    { encoding: "utf8" },
  );
  rmSync(dir, { recursive: true });
  const [real, user, system] = run.stderr.trim().split("\n").pop().split(" ").map(Number);
  return { seconds: real, cpuSeconds: user + system, status: run.status };
}

async function repeatedListings() {
  const proxy = session(binary, ["proxy", "--", "node", server, "--extra-tools", String(toolCount - baseTools)]);
  await proxy.initialize();
  const before = memoryMiB(proxy.pid);
  let tools = 0;
  let short = 0;
  for (let i = 1; i <= listingCount; i++) {
    tools = (await proxy.request(i, "tools/list", {})).result.tools.length;
    if (tools !== toolCount) short++;
  }
  const after = memoryMiB(proxy.pid);
  await proxy.close();
  return { tools, short, before, after };
}

const mb = (n) => (n / 1e6).toFixed(2);
const large = await largeCall();
console.log(
  `large call (${mb(callBytes)} MB, ${argumentCount.toLocaleString("en")} undeclared arguments, 200-argument closed tool) through the proxy: ` +
    `answered in ${large.answerMs.toFixed(0)} ms (${large.lines} messages), proxy CPU ${large.cpuMs.toFixed(0)} ms, ` +
    `a ping sent behind it answered in ${large.pingMs.toFixed(0)} ms`,
);
const validate = validateCall();
console.log(
  `validate --args with the same arguments: ${validate.seconds.toFixed(2)} s (CPU ${validate.cpuSeconds.toFixed(2)} s), exit ${validate.status}`,
);
const listings = await repeatedListings();
console.log(
  `proxy memory after ${listingCount} listings of ${listings.tools} tools: RSS ${listings.after.rss.toFixed(1)} MiB ` +
    `(peak ${listings.after.peak.toFixed(1)} MiB; ${listings.before.rss.toFixed(1)} MiB before)`,
);

// What the figures stand on: the call was refused, by the proxy and by `validate` (exit 1: the
// arguments are invalid), and every listing held every tool.
const failures = [];
if (!large.refused) failures.push("the proxy did not refuse the call with undeclared arguments");
if (validate.status !== 1) failures.push(`validate exited ${validate.status}, not 1`);
if (listings.short > 0) failures.push(`${listings.short} listings did not hold ${toolCount} tools`);
for (const failure of failures) console.error(`bench-hostile: ${failure}`);
process.exit(failures.length === 0 ? 0 : 1);
