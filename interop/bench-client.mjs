#!/usr/bin/env node
// The proxy benchmark's client (TypeScript SDK). Sequential tools/call round trips on the echo
// tool of bench-server.mjs, directly, through `toolschema proxy`, and through the proxy exporting
// traces (--otlp-endpoint, to a local receiver that answers every export), interleaved in one
// run; then the proxy's peak memory with a 1,000-tool list.
//
//   node bench-client.mjs TOOLSCHEMA_BINARY [--calls N] [--rounds N] [--tools N] [--warmup N]
//                         [--metrics]
//
// With --metrics, a fourth path is interleaved with the others: the proxy with
// `--metrics 127.0.0.1:0` (its metrics counted for every call), compared with the plain proxy.
//
// Calls are measured in rounds of fresh sessions; the figures pool every round's samples, and the
// spread of the per-round p50 ratios is shown beside them.

import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { numberOption } from "./bench-options.mjs";

const [binary, ...rest] = process.argv.slice(2);
const option = (name, fallback) => numberOption(rest, name, fallback);
const calls = option("--calls", 5000);
const toolCount = option("--tools", 1000);
const roundCount = option("--rounds", 5);
const warmup = option("--warmup", 300);
const withMetrics = rest.includes("--metrics");
const server = fileURLToPath(new URL("./bench-server.mjs", import.meta.url));

// The OTLP receiver of the traced path, in a process of its own: it reads each export and
// answers 200, counting the bytes (decoding is the collector's cost, not the proxy's).
const receiverCode = `
let bytes = 0, exports = 0;
const server = require("node:http").createServer((req, res) => {
  req.on("data", (chunk) => { bytes += chunk.length; });
  req.on("end", () => { exports++; res.writeHead(200, {"content-type": "application/x-protobuf"}); res.end(); });
});
server.listen(0, "127.0.0.1", () => console.log(server.address().port));
process.on("SIGTERM", () => { console.log(exports + " " + bytes); process.exit(0); });
`;
const receiver = spawn("node", ["-e", receiverCode], { stdio: ["ignore", "pipe", "inherit"] });
const receiverOut = [];
receiver.stdout.setEncoding("utf8");
const receiverPort = await new Promise((resolve) => {
  receiver.stdout.on("data", (chunk) => {
    receiverOut.push(chunk);
    if (receiverOut.length === 1) resolve(Number(chunk.trim()));
  });
});
const otlp = `http://127.0.0.1:${receiverPort}/v1/traces`;

async function connect(command, args) {
  const transport = new StdioClientTransport({ command, args, stderr: "inherit" });
  const client = new Client({ name: "bench", version: "1.0.0" });
  await client.connect(transport);
  return { client, transport };
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function summary(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const total = samples.reduce((a, b) => a + b, 0);
  return {
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    mean: total / samples.length,
    callsPerSecond: samples.length / (total / 1000),
  };
}

function peakRssMiB(pid) {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = Number(/VmHWM:\s+(\d+) kB/.exec(status)[1]);
  return kib / 1024;
}

// CPU time the process has used so far, in milliseconds: every thread, user and system.
function cpuMs(pid) {
  let ns = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    ns += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ")[0]);
  }
  return ns / 1e6;
}

const echo = (c, i) => c.client.callTool({ name: "echo", arguments: { message: `message ${i}` } });

// One round: fresh direct and proxied sessions (so each round draws its own placement of the
// processes on the CPUs, which moves a latency figure more than anything a relay does), warmed
// up, then `calls` calls per path, interleaved.
async function round() {
  const direct = await connect("node", [server]);
  const proxied = await connect(binary, ["proxy", "--", "node", server]);
  const traced = await connect(binary, ["proxy", "--otlp-endpoint", otlp, "--", "node", server]);
  const sessions = { direct, proxied, traced };
  if (withMetrics) {
    sessions.metrics = await connect(binary, ["proxy", "--metrics", "127.0.0.1:0", "--", "node", server]);
  }
  const paths = Object.keys(sessions);
  // Warm up every path (JIT, the proxy's first tools/list and compile).
  for (let i = 0; i < warmup; i++) {
    for (const path of paths) await echo(sessions[path], i);
  }
  const times = Object.fromEntries(paths.map((path) => [path, []]));
  const cpuAtStart = cpuMs(proxied.transport.pid);
  const tracedCpuAtStart = cpuMs(traced.transport.pid);
  for (let i = 0; i < calls; i++) {
    // Rotate which path goes first, so none gains from another's warm caches.
    const order = paths.map((_, k) => paths[(i + k) % paths.length]);
    for (const path of order) {
      const c = sessions[path];
      const start = performance.now();
      const result = await echo(c, i);
      times[path].push(performance.now() - start);
      if (result.content[0].text !== `message ${i}`) throw new Error(`wrong result on ${path}`);
    }
  }
  const cpuPerCallUs = ((cpuMs(proxied.transport.pid) - cpuAtStart) * 1000) / calls;
  const tracedCpuPerCallUs = ((cpuMs(traced.transport.pid) - tracedCpuAtStart) * 1000) / calls;
  const rss = peakRssMiB(proxied.transport.pid);
  const tracedRss = peakRssMiB(traced.transport.pid);
  for (const path of paths) await sessions[path].client.close();
  return { times, cpuPerCallUs, tracedCpuPerCallUs, rss, tracedRss };
}

const rounds = [];
for (let r = 0; r < roundCount; r++) rounds.push(await round());
const times = {
  direct: rounds.flatMap((r) => r.times.direct),
  proxied: rounds.flatMap((r) => r.times.proxied),
  traced: rounds.flatMap((r) => r.times.traced),
};
const roundRatios = rounds.map((r) => summary(r.times.proxied).p50 / summary(r.times.direct).p50);
const tracedRatios = rounds.map((r) => summary(r.times.traced).p50 / summary(r.times.proxied).p50);
const proxyCpuPerCallUs = rounds.reduce((a, r) => a + r.cpuPerCallUs, 0) / rounds.length;
const tracedCpuPerCallUs = rounds.reduce((a, r) => a + r.tracedCpuPerCallUs, 0) / rounds.length;
const smallListRss = Math.max(...rounds.map((r) => r.rss));
const tracedRss = Math.max(...rounds.map((r) => r.tracedRss));
receiver.kill("SIGTERM");
await new Promise((resolve) => receiver.on("exit", resolve));
const [exportCount, exportBytes] = receiverOut.join("").trim().split("\n").pop().split(" ").map(Number);

// Peak memory with a large tool list: list it through the proxy, then call every tool once so
// every validator is compiled.
const large = await connect(binary, ["proxy", "--", "node", server, "--tools", String(toolCount)]);
let listed = 0;
let cursor;
do {
  const page = await large.client.listTools(cursor ? { cursor } : {});
  listed += page.tools.length;
  cursor = page.nextCursor;
} while (cursor);
if (listed !== toolCount + 1) throw new Error(`the proxy listed ${listed} tools, not ${toolCount + 1}`);
const afterListRss = peakRssMiB(large.transport.pid);
for (let i = 0; i < toolCount; i++) {
  await large.client.callTool({ name: `search_${i}`, arguments: { query: "rust", limit: 5 } });
}
const afterCallsRss = peakRssMiB(large.transport.pid);
await large.client.close();

const d = summary(times.direct);
const p = summary(times.proxied);
const t = summary(times.traced);
const ms = (x) => x.toFixed(3);
console.log(`sequential tools/call round trips on echo, ${roundCount} rounds of ${calls} per path, interleaved`);
console.log(`machine: ${cpus().length} CPUs, load average ${loadavg().map((l) => l.toFixed(2)).join(" ")}`);
console.log(`                 p50 ms    p99 ms   mean ms   calls/s`);
console.log(`direct         ${ms(d.p50).padStart(8)}  ${ms(d.p99).padStart(8)}  ${ms(d.mean).padStart(8)}  ${d.callsPerSecond.toFixed(0).padStart(8)}`);
console.log(`through proxy  ${ms(p.p50).padStart(8)}  ${ms(p.p99).padStart(8)}  ${ms(p.mean).padStart(8)}  ${p.callsPerSecond.toFixed(0).padStart(8)}`);
console.log(`proxy, traced  ${ms(t.p50).padStart(8)}  ${ms(t.p99).padStart(8)}  ${ms(t.mean).padStart(8)}  ${t.callsPerSecond.toFixed(0).padStart(8)}`);
console.log(`p50 ratio (proxy / direct): ${(p.p50 / d.p50).toFixed(3)} (target <= 1.2)`);
const sortedRatios = [...roundRatios].sort((a, b) => a - b);
console.log(`p50 ratio per round: ${roundRatios.map((r) => r.toFixed(3)).join(" ")} (median ${percentile(sortedRatios, 50).toFixed(3)})`);
if (withMetrics) {
  const metrics = rounds.flatMap((r) => r.times.metrics);
  const m = summary(metrics);
  const ratios = rounds.map((r) => summary(r.times.metrics).p50 / summary(r.times.proxied).p50);
  const sorted = [...ratios].sort((a, b) => a - b);
  console.log(`proxy --metrics${ms(m.p50).padStart(9)}  ${ms(m.p99).padStart(8)}  ${ms(m.mean).padStart(8)}  ${m.callsPerSecond.toFixed(0).padStart(8)}`);
  console.log(`p50 ratio (--metrics / plain proxy): ${(m.p50 / p.p50).toFixed(3)} (target <= 1.03)`);
  console.log(`  per round: ${ratios.map((r) => r.toFixed(3)).join(" ")} (median ${percentile(sorted, 50).toFixed(3)})`);
}
console.log(`proxy CPU time per call: ${proxyCpuPerCallUs.toFixed(1)} us (user + system, all threads)`);
const sortedTraced = [...tracedRatios].sort((a, b) => a - b);
console.log(`p50 ratio (traced / proxy): ${(t.p50 / p.p50).toFixed(3)} (target <= 1.10); per round: ${tracedRatios.map((r) => r.toFixed(3)).join(" ")} (median ${percentile(sortedTraced, 50).toFixed(3)})`);
console.log(`traced proxy CPU time per call: ${tracedCpuPerCallUs.toFixed(1)} us; peak RSS ${tracedRss.toFixed(1)} MiB; the receiver took ${exportCount} exports, ${(exportBytes / 1024).toFixed(0)} KiB`);
console.log(`proxy peak RSS: ${smallListRss.toFixed(1)} MiB with the echo server (${calls + warmup} calls a session)`);
console.log(`proxy peak RSS: ${afterListRss.toFixed(1)} MiB after listing ${listed} tools, ${afterCallsRss.toFixed(1)} MiB after calling each once (every validator compiled)`);
