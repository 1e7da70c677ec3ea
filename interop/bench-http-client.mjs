#!/usr/bin/env node
// The HTTP proxy benchmark's client (TypeScript SDK, StreamableHTTPClientTransport): many
// concurrent sessions, each calling the echo tool of bench-server.mjs (over Streamable HTTP) in a
// loop, directly and through `toolschema proxy --listen --upstream`, in interleaved rounds of one
// run. Prints p50/p99 latency, calls per second, errors, the proxy's CPU time per call and its
// peak memory.
//
//   node bench-http-client.mjs TOOLSCHEMA_BINARY [--sessions N] [--seconds N] [--rounds N]
//
// Each path gets SECONDS in all, cut into ROUNDS rounds that alternate between the paths, so
// that a change in the machine's load during the run falls on both.

import { readFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { closeAll, connectAll, load, memoryMiB, percentile, start } from "./http-load.mjs";
import { numberOption } from "./bench-options.mjs";

const [binary, ...rest] = process.argv.slice(2);
const option = (name, fallback) => numberOption(rest, name, fallback);
const sessions = option("--sessions", 64);
const seconds = option("--seconds", 30);
const rounds = option("--rounds", 3);
const serverScript = fileURLToPath(new URL("./bench-server.mjs", import.meta.url));

function cpuMs(pid) {
  // utime + stime, in clock ticks (100 per second on Linux).
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

const serverPort = 20000 + Math.floor(Math.random() * 20000);
const server = await start("node", [serverScript, "--http", String(serverPort)], /listening on/);
const direct = `http://127.0.0.1:${serverPort}/mcp`;
const proxy = await start(
  binary,
  ["proxy", "--listen", "127.0.0.1:0", "--max-sessions", String(sessions * 2), "--upstream", direct],
  /serving MCP at (http:\/\/\S+)\n/,
);
const proxied = proxy.match[1];

const paths = { direct: { url: direct }, proxy: { url: proxied } };
for (const path of Object.values(paths)) {
  path.clients = await connectAll(path.url, sessions);
  path.latencies = [];
  path.errors = 0;
  path.ms = 0;
}
const roundMs = (seconds * 1000) / rounds;
let proxyCpu = 0;
let proxyCalls = 0;
for (let round = 0; round < rounds; round++) {
  for (const [name, path] of Object.entries(paths)) {
    const cpuBefore = cpuMs(proxy.child.pid);
    const started = performance.now();
    const { latencies, errors } = await load(path.clients, roundMs);
    path.ms += performance.now() - started;
    path.latencies.push(...latencies);
    path.errors += errors;
    if (name === "proxy") {
      proxyCpu += cpuMs(proxy.child.pid) - cpuBefore;
      proxyCalls += latencies.length + errors;
    }
  }
}
const figures = {};
for (const [name, path] of Object.entries(paths)) {
  const sorted = path.latencies.sort((a, b) => a - b);
  figures[name] = {
    calls: sorted.length,
    errors: path.errors,
    callsPerSecond: sorted.length / (path.ms / 1000),
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
  };
  await closeAll(path.clients);
}
const peak = memoryMiB(proxy.child.pid).peak;
proxy.child.kill("SIGTERM");
server.child.kill("SIGTERM");

const f = (x, digits = 2) => x.toFixed(digits);
console.log(
  `toolschema proxy over Streamable HTTP: ${sessions} sessions calling echo for ${seconds} s per path, ` +
    `${rounds} interleaved rounds; ${cpus().length} cores, load ${loadavg().map((l) => f(l)).join(" ")}`,
);
console.log("path     calls    errors  calls/s   p50 ms   p99 ms");
for (const [name, x] of Object.entries(figures)) {
  console.log(
    `${name.padEnd(8)} ${String(x.calls).padStart(7)} ${String(x.errors).padStart(8)} ${f(x.callsPerSecond, 0).padStart(8)} ${f(x.p50).padStart(8)} ${f(x.p99).padStart(8)}`,
  );
}
const throughput = figures.proxy.callsPerSecond / figures.direct.callsPerSecond;
const p50 = figures.proxy.p50 / figures.direct.p50;
console.log(`throughput proxy/direct: ${f(throughput)} (goal >= 0.8)`);
console.log(`p50 proxy/direct: ${f(p50)} (goal <= 1.2)`);
console.log(`proxy CPU per call: ${f((proxyCpu * 1000) / proxyCalls, 1)} us`);
console.log(`proxy peak memory: ${f(peak, 1)} MiB`);
process.exit(figures.direct.errors + figures.proxy.errors === 0 ? 0 : 1);
