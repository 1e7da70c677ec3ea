#!/usr/bin/env node
// The soak of `toolschema proxy --listen --upstream` (scripts/soak-http.sh): well-behaved
// TypeScript SDK sessions, each with its own token, call the echo tool of bench-server.mjs
// (--soak: it judges every call it receives against its own inputSchema) through the proxy,
// first alone (phase A, the baseline), then beside the hostile peers of soak-hostile.mjs (phase
// B). The proxy runs with a low descriptor limit so that the stalled connections reach it. After
// phase B the hostile peers stop but keep their connections open; the soak waits up to SETTLE
// seconds for the proxy's descriptors to come back, takes its last reading, and has every
// session call once more. It prints a table and one `soak-summary: {JSON}` line, and exits 1 when
// a goal is missed (2 when the harness itself could not run).
//
//   node soak-http.mjs TOOLSCHEMA_BINARY [--short] [--sessions N] [--duration S] [--baseline S]
//        [--settle S] [--interval MS] [--timeout MS] [--fd-limit N] [--read-timeout S]
//        [--flood-count N] [--flood-bytes N] [--flood-every S] [--invalid-rate N]
//        [--guess-rate N] [--stalled N] [--proxy-arg ARG]...
//
// --duration 0 runs the baseline alone, without hostile peers (a check of the harness). A rate or
// count of 0 leaves that hostile peer out.

import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { closeAll, connectAll, load, memoryMiB, percentile, sleep, start } from "./http-load.mjs";

const [binary, ...rest] = process.argv.slice(2);
if (!binary) {
  console.error("usage: node soak-http.mjs TOOLSCHEMA_BINARY [--short] [options]");
  process.exit(2);
}
const short = rest.includes("--short");
const proxyArgs = [];
for (let i = 0; i < rest.length; i++) if (rest[i] === "--proxy-arg") proxyArgs.push(rest[++i]);
const option = (name, full, brief) => {
  const at = rest.indexOf(name);
  return at === -1 ? (short ? brief : full) : Number(rest[at + 1]);
};
const o = {
  sessions: option("--sessions", 64, 8),
  duration: option("--duration", 600, 15),
  baseline: option("--baseline", 120, 6),
  settle: option("--settle", 60, 15),
  intervalMs: option("--interval", 250, 250),
  timeoutMs: option("--timeout", 10_000, 10_000),
  fdLimit: option("--fd-limit", 1024, 256),
  // The proxy's --read-timeout and --write-timeout, when it has them (0: its defaults).
  readTimeout: option("--read-timeout", 0, 5),
  floodCount: option("--flood-count", 2000, 100),
  floodBytes: option("--flood-bytes", 256 * 1024, 256 * 1024),
  floodEvery: option("--flood-every", 60, 60),
  invalidRate: option("--invalid-rate", 20, 10),
  guessRate: option("--guess-rate", 20, 10),
};
// The stalled connections kept open: by default as many as the proxy may hold descriptors.
o.stalled = option("--stalled", o.fdLimit, o.fdLimit);
const GOAL_RSS_MIB = 256;
const here = (file) => fileURLToPath(new URL(file, import.meta.url));

// Bounded whatever happens: the phases, the settling, and two minutes for the rest.
const budget = o.baseline + o.duration + o.settle + 120;
setTimeout(() => {
  console.error(`soak-http: did not finish within ${budget} s`);
  cleanup();
  process.exit(2);
}, budget * 1000).unref();

const children = [];
function cleanup() {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
}
process.on("exit", cleanup);
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => {
    cleanup();
    process.exit(2);
  });
}

function harnessFailure(what) {
  console.error(`soak-http: ${what}`);
  cleanup();
  process.exit(2);
}

async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

// ---- set-up: tokens, the recording server, the proxy ------------------------------------------

const dir = mkdtempSync(join(tmpdir(), "soak-http-"));
process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
const token = () => randomBytes(24).toString("base64url");
const tokens = {};
for (let i = 0; i < o.sessions; i++) tokens[`client-${i}`] = token();
for (const name of ["hostile-reader", "hostile-invalid", "hostile-stall"]) tokens[name] = token();
const tokenFile = join(dir, "tokens");
writeFileSync(tokenFile, Object.entries(tokens).map(([name, t]) => `${name}:${t}\n`).join(""));

const upstreamPort = await freePort();
const upstream = await start(
  "node",
  [here("./bench-server.mjs"), "--http", String(upstreamPort), "--soak"],
  /listening on/,
).catch((error) => harnessFailure(`the recording server did not start: ${error.message}`));
children.push(upstream.child);
const upstreamUrl = `http://127.0.0.1:${upstreamPort}`;

/** --read-timeout and --write-timeout for the proxy, those of them it has, when asked for. A
 * proxy without them keeps stalled connections as long as they stay open; the soak then waits
 * --settle seconds for nothing and says so. */
function timeoutArgs() {
  const help = spawnSync(binary, ["proxy", "--help"], { encoding: "utf8" }).stdout ?? "";
  const has = (flag) => new RegExp(`${flag}\\b`).test(help);
  timeoutsKnown = has("--read-timeout");
  if (o.readTimeout <= 0) return [];
  return ["--read-timeout", "--write-timeout"].filter(has).flatMap((flag) => [flag, String(o.readTimeout)]);
}
let timeoutsKnown = false;

const readerRounds = o.floodCount > 0 ? Math.max(1, Math.ceil(o.duration / o.floodEvery)) : 0;
const proxyOptions = [
  // Room for every well-behaved session and every hostile one.
  "--max-sessions",
  String(o.sessions + readerRounds + 16),
  ...timeoutArgs(),
  ...proxyArgs,
];
const args = [
  "proxy",
  "--listen",
  "127.0.0.1:0",
  "--auth-token-file",
  tokenFile,
  "--upstream",
  `${upstreamUrl}/mcp`,
  ...proxyOptions,
];
// The proxy gets its own, lower descriptor limit: the stalled connections reach it quickly.
const proxy = await start(
  "bash",
  ["-c", `ulimit -n ${o.fdLimit} && exec "$0" "$@"`, binary, ...args],
  /serving MCP at (http:\/\/\S+)\n/,
).catch((error) => harnessFailure(`the proxy did not start: ${error.message}`));
children.push(proxy.child);
const proxyUrl = proxy.match[1];
const pid = proxy.child.pid;
const proxyPort = Number(new URL(proxyUrl).port);

// ---- sampling the proxy every second ----------------------------------------------------------

function descriptors() {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return NaN;
  }
}

function cpuSeconds() {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

let phase = "setup";
const samples = [];
function sample() {
  try {
    const { rss, peak } = memoryMiB(pid);
    samples.push({ t: Date.now(), phase, rss, peak, fds: descriptors(), cpu: cpuSeconds() });
  } catch {
    samples.push({ t: Date.now(), phase, gone: true });
  }
}
sample();
const sampler = setInterval(sample, 1000);

/** The proxy's sockets, sorted by who is at the other end (`ports` maps a peer's local port to
 * its kind). */
function socketsByPeer(ports) {
  const inodes = new Map();
  let fds = [];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return {};
  }
  for (const fd of fds) {
    try {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      const match = /^socket:\[(\d+)\]$/.exec(target);
      if (match) inodes.set(match[1], "other");
    } catch {
      // closed meanwhile
    }
  }
  const kinds = {};
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let lines = [];
    try {
      lines = readFileSync(file, "utf8").split("\n").slice(1);
    } catch {
      continue;
    }
    for (const line of lines) {
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10 || !inodes.has(fields[9])) continue;
      const local = parseInt(fields[1].split(":")[1], 16);
      const remote = parseInt(fields[2].split(":")[1], 16);
      let kind = "other";
      if (fields[2].endsWith(":0000")) kind = "listener";
      else if (remote === upstreamPort) kind = "to the upstream";
      else if (local === proxyPort) kind = ports.get(remote) ?? "clients";
      inodes.set(fields[9], kind);
    }
  }
  for (const kind of inodes.values()) kinds[kind] = (kinds[kind] ?? 0) + 1;
  return kinds;
}

/** What soak-hostile.mjs reports, when none ran. */
const NO_HOSTILE_PEERS = {
  stalled: {
    target: 0,
    opened: 0,
    connected: 0,
    connectTimeouts: 0,
    errors: {},
    closedByProxy: 0,
    answeredByProxy: {},
    heldMax: 0,
    heldAtEnd: 0,
    ports: [],
  },
  readers: { rounds: 0, sessions: 0, sessionErrors: {}, floodCalls: 0, ports: [] },
  invalid: { sent: 0, refused: 0, passed: 0, failed: 0, byCase: {}, skippedCases: [], failures: {} },
  guess: { sent: 0, statuses: {}, accepted: 0, failures: {} },
  harnessErrors: [],
};

// ---- the phases --------------------------------------------------------------------------------

const loadOptions = { intervalMs: o.intervalMs, timeoutMs: o.timeoutMs };
const bearer = (i) => ({ authorization: `Bearer ${tokens[`client-${i}`]}` });
const clients = await connectAll(proxyUrl, o.sessions, bearer).catch((error) =>
  harnessFailure(`the well-behaved sessions could not connect: ${error.message}`),
);
sample();
const fdsConnected = descriptors();

phase = "A";
const cpuA = cpuSeconds();
const a = await load(clients, o.baseline * 1000, loadOptions);
const cpuAUsed = cpuSeconds() - cpuA;

phase = "B";
const hostileConfig = {
  url: proxyUrl,
  seconds: o.duration,
  hold: o.settle + 60,
  // One the proxy closes is opened again: up to one target's worth every 15 s of the phase.
  stalled: {
    target: o.stalled,
    perSecond: 200,
    maxOpens: o.stalled * Math.max(4, Math.ceil(o.duration / 15)),
    token: tokens["hostile-stall"],
  },
  readers: {
    rounds: readerRounds,
    everySeconds: o.floodEvery,
    count: o.floodCount,
    bytes: o.floodBytes,
    token: tokens["hostile-reader"],
  },
  invalid: { perSecond: o.invalidRate, token: tokens["hostile-invalid"] },
  guess: { perSecond: o.guessRate, knownToken: tokens["client-0"] },
};
// With --duration 0, the baseline alone (a check of the harness): no hostile peers.
const hostile = o.duration > 0 ? spawn("node", [here("./soak-hostile.mjs"), JSON.stringify(hostileConfig)], {
  stdio: ["pipe", "pipe", "inherit"],
}) : null;
if (hostile) children.push(hostile);
const hostileSummary = hostile ? new Promise((resolve) => {
  createInterface({ input: hostile.stdout }).once("line", (line) => resolve(JSON.parse(line)));
  hostile.once("exit", () => resolve(null));
}) : Promise.resolve(NO_HOSTILE_PEERS);
const cpuB = cpuSeconds();
const b = await load(clients, o.duration * 1000, loadOptions);
const cpuBUsed = cpuSeconds() - cpuB;
const hostiles = await Promise.race([hostileSummary, sleep(30_000).then(() => null)]);
if (!hostiles) harnessFailure("the hostile peers did not report");

// The hostile peers have stopped; their stalled and silent connections stay open. Wait until the
// proxy's descriptors are back near where they were in phase A, or SETTLE seconds.
phase = "settle";
const reference = Math.max(fdsConnected, ...samples.filter((s) => s.phase === "A" && !s.gone).map((s) => s.fds));
const tolerance = Math.max(16, Math.ceil(reference * 0.1));
const settleStart = Date.now();
const cpuSettle = cpuSeconds();
while (Date.now() - settleStart < o.settle * 1000 && !(descriptors() <= reference + tolerance)) await sleep(1000);
const settledAfter = (Date.now() - settleStart) / 1000;
const cpuSettleUsed = cpuSeconds() - cpuSettle;
sample();
const fdsEnd = descriptors();
const ports = new Map();
for (const port of hostiles.stalled.ports) ports.set(port, "stalled by a hostile peer");
for (const port of hostiles.readers.ports) ports.set(port, "not read by a hostile peer");
const heldAtEnd = socketsByPeer(ports);

// Once the attack is over, every session is served again.
phase = "after";
const after = await load(clients, Math.max(2_000, o.intervalMs * 4), {
  ...loadOptions,
  timeoutMs: Math.min(o.timeoutMs, 5_000),
});
sample();
clearInterval(sampler);
hostile?.stdin.end();

const stats = await fetch(`${upstreamUrl}/stats`, { signal: AbortSignal.timeout(10_000) })
  .then((r) => r.json())
  .catch((error) => harnessFailure(`the recording server's counts could not be read: ${error.message}`));
await Promise.race([closeAll(clients), sleep(3_000)]);
const live = samples.filter((s) => !s.gone);
const peakRss = Math.max(...live.map((s) => s.peak));
const proxyAlive = proxy.child.exitCode === null && proxy.child.signalCode === null;
proxy.child.kill("SIGTERM");
upstream.child.kill("SIGTERM");

// ---- the report -------------------------------------------------------------------------------

const f = (x, digits = 1) => (x === undefined || Number.isNaN(x) ? "-" : x.toFixed(digits));
const figures = (run) => {
  const sorted = run.latencies.sort((x, y) => x - y);
  return {
    calls: sorted.length + run.errors,
    errors: run.errors,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    errorKinds: run.errorKinds,
  };
};
const A = figures(a);
const B = figures(b);
const AFTER = figures(after);
const during = (p) => live.filter((s) => s.phase === p);
const fdsOf = (p) => during(p).map((s) => s.fds);
const rssOf = (p) => during(p).map((s) => s.rss);
const max = (xs) => (xs.length ? Math.max(...xs) : NaN);

const check = (goal, ok, value) => ({ goal, ok, value });
const errorsAll = A.errors + B.errors + AFTER.errors;
const checks = [
  check("well-behaved errors = 0", errorsAll === 0, errorsAll),
  check("invalid calls the server received = 0", stats.invalid === 0, stats.invalid),
  check(`proxy peak RSS < ${GOAL_RSS_MIB} MiB`, peakRss < GOAL_RSS_MIB, `${f(peakRss)} MiB`),
  check(
    `proxy descriptors at the end <= ${reference} + ${tolerance} (phase A's most)`,
    fdsEnd <= reference + tolerance,
    fdsEnd,
  ),
  check("guessed tokens accepted = 0", hostiles.guess.accepted === 0, hostiles.guess.accepted),
  check("invalid calls answered as if valid = 0", hostiles.invalid.passed === 0, hostiles.invalid.passed),
  check("the proxy still running", proxyAlive, proxyAlive ? "yes" : `exited ${proxy.child.exitCode ?? proxy.child.signalCode}`),
];
// A hostile peer that did nothing would make the soak pass for nothing.
const ran = [
  ["stalled connections opened", hostiles.stalled.connected > 0 || o.stalled === 0],
  ["non-reading sessions opened", hostiles.readers.sessions > 0 || readerRounds === 0],
  ["invalid calls sent", hostiles.invalid.sent > 0 || o.invalidRate === 0],
  ["guessed tokens sent", hostiles.guess.sent > 0 || o.guessRate === 0],
];
if (hostile) for (const [what, ok] of ran) checks.push(check(`hostile peer ran: ${what}`, ok, ok ? "yes" : "no"));
const passed = checks.every((c) => c.ok);

console.log(
  `toolschema proxy soak over Streamable HTTP${short ? " (short)" : ""}: ${o.sessions} sessions, ` +
    `one call each ${o.intervalMs} ms apart (timeout ${o.timeoutMs} ms); phase A ${o.baseline} s alone, ` +
    `phase B ${o.duration} s beside the hostile peers; proxy descriptor limit ${o.fdLimit}, ` +
    `proxy options ${proxyOptions.join(" ")}; ${cpus().length} cores, ` +
    `load ${loadavg().map((l) => f(l, 2)).join(" ")}`,
);
if (!timeoutsKnown) {
  console.log(
    "this proxy has no --read-timeout: it holds a stalled connection as long as its peer keeps it open " +
      `(the last reading was taken ${o.settle} s after the hostile peers stopped, at most)`,
  );
}
console.log("");
console.log("phase       calls   errors   p50 ms   p99 ms   proxy CPU s   proxy RSS max MiB   proxy fds max");
const row = (name, x, cpu, p) =>
  console.log(
    [
      name.padEnd(10),
      String(x.calls).padStart(6),
      String(x.errors).padStart(8),
      f(x.p50).padStart(8),
      f(x.p99).padStart(8),
      f(cpu).padStart(13),
      f(max(rssOf(p))).padStart(19),
      f(max(fdsOf(p)), 0).padStart(15),
    ].join(" "),
  );
row("A alone", A, cpuAUsed, "A");
row("B hostile", B, cpuBUsed, "B");
row("settle", { calls: 0, errors: 0 }, cpuSettleUsed, "settle");
row("after", AFTER, undefined, "after");
console.log("");
console.log(`p50 B/A: ${f(B.p50 / A.p50, 2)}   p99 B/A: ${f(B.p99 / A.p99, 2)}`);
console.log(`proxy peak RSS (VmHWM): ${f(peakRss)} MiB`);
console.log(
  `proxy descriptors: ${samples[0].fds} at start, ${fdsConnected} with the sessions connected, ` +
    `${f(max(fdsOf("A")), 0)} most in A, ${f(max(fdsOf("B")), 0)} most in B, ` +
    `${fdsEnd} at the end (${f(settledAfter, 0)} s after the hostile peers stopped)`,
);
console.log(`proxy sockets at the end, by peer: ${JSON.stringify(heldAtEnd)}`);
console.log(
  `recording server: ${JSON.stringify(stats.calls)} calls received, ${stats.invalid} invalid, ` +
    `${stats.floodNotifications} notifications flooded ` +
    `(${stats.floodsStalled} floods stopped by a reader that did not read)`,
);
const s = hostiles.stalled;
console.log(
  `stalled: ${s.opened} opened (target ${s.target}), ${s.connected} connected, ${s.heldMax} held at most, ` +
    `${s.closedByProxy} closed by the proxy, answers ${JSON.stringify(s.answeredByProxy)}, ` +
    `${s.connectTimeouts} connects timed out, errors ${JSON.stringify(s.errors)}, ` +
    `${s.heldAtEnd} still open when they stopped`,
);
const r = hostiles.readers;
const readerErrors = Object.keys(r.sessionErrors).length ? `, errors ${JSON.stringify(r.sessionErrors)}` : "";
console.log(
  `non-reading: ${r.sessions} of ${r.rounds} sessions opened, ` +
    `${r.floodCalls} flood calls of ${o.floodCount} x ${o.floodBytes} bytes${readerErrors}`,
);
const inv = hostiles.invalid;
const setupError = inv.setupError ? `, set-up failed: ${inv.setupError}` : "";
const skipped = inv.skippedCases.length ? ` (not invalid here, skipped: ${inv.skippedCases.join(", ")})` : "";
console.log(
  `invalid calls: ${inv.sent} sent, ${inv.refused} refused, ${inv.passed} answered as valid, ` +
    `${inv.failed} failed ${JSON.stringify(inv.failures)}${setupError}; ` +
    `cases ${Object.keys(inv.byCase).join(", ")}${skipped}`,
);
const g = hostiles.guess;
console.log(
  `token guesses: ${g.sent} sent, statuses ${JSON.stringify(g.statuses)}, ${g.accepted} accepted, ` +
    `failures ${JSON.stringify(g.failures)}`,
);
if (hostiles.harnessErrors.length) console.log(`hostile peers' own errors: ${hostiles.harnessErrors.join("; ")}`);
for (const [name, x] of [["A", A], ["B", B], ["after", AFTER]]) {
  if (x.errors) console.log(`well-behaved errors in ${name}: ${JSON.stringify(x.errorKinds)}`);
}
if (stats.invalid) {
  const shown = stats.invalidSamples.map((params) => JSON.stringify(params).slice(0, 160));
  console.log(`invalid calls the server received (first ones): ${shown.join(" ")}`);
}
if (!proxyAlive) console.log(`proxy stderr (end): ${proxy.child.stderrTail.slice(-2000)}`);
console.log("");
for (const c of checks) console.log(`${c.ok ? "ok  " : "FAIL"} ${c.goal}: ${c.value}`);
console.log(passed ? "soak: every goal met" : "soak: goals missed");
console.log(
  `soak-summary: ${JSON.stringify({
    passed,
    options: { ...o, short, proxyArgs },
    phases: { A: { ...A }, B: { ...B }, after: { ...AFTER } },
    p99Ratio: B.p99 / A.p99,
    peakRssMiB: peakRss,
    descriptors: {
      start: samples[0].fds,
      connected: fdsConnected,
      reference,
      tolerance,
      maxB: max(fdsOf("B")),
      end: fdsEnd,
      settledAfter,
      heldAtEnd,
    },
    proxyCpuSeconds: { A: cpuAUsed, B: cpuBUsed, settle: cpuSettleUsed },
    server: { calls: stats.calls, invalid: stats.invalid, floodNotifications: stats.floodNotifications },
    hostile: { stalled: { ...s, ports: undefined }, readers: { ...r, ports: undefined }, invalid: inv, guess: g },
    checks,
  })}`,
);
process.exit(passed ? 0 : 1);
