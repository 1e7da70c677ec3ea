#!/usr/bin/env node
// The proxy benchmark's client (TypeScript SDK). Sequential tools/call round trips on the echo
// tool of bench-server.mjs, directly and through `toolschema proxy`, interleaved in one run; then
// the proxy's peak memory with a 1,000-tool list.
//
//   node bench-client.mjs TOOLSCHEMA_BINARY [--calls N] [--tools N]

import { readFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [binary, ...rest] = process.argv.slice(2);
const option = (name, fallback) => {
  const at = rest.indexOf(name);
  return at === -1 ? fallback : Number(rest[at + 1]);
};
const calls = option("--calls", 5000);
const toolCount = option("--tools", 1000);
const server = fileURLToPath(new URL("./bench-server.mjs", import.meta.url));

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

const direct = await connect("node", [server]);
const proxied = await connect(binary, ["proxy", "--", "node", server]);
const echo = (c, i) => c.client.callTool({ name: "echo", arguments: { message: `message ${i}` } });

// Warm up both paths (JIT, the proxy's first tools/list and compile).
for (let i = 0; i < 300; i++) {
  await echo(direct, i);
  await echo(proxied, i);
}
const times = { direct: [], proxied: [] };
for (let i = 0; i < calls; i++) {
  // Alternate which path goes first, so neither gains from the other's warm caches.
  const order = i % 2 === 0 ? ["direct", "proxied"] : ["proxied", "direct"];
  for (const path of order) {
    const c = path === "direct" ? direct : proxied;
    const start = performance.now();
    const result = await echo(c, i);
    times[path].push(performance.now() - start);
    if (result.content[0].text !== `message ${i}`) throw new Error(`wrong result on ${path}`);
  }
}
const proxyPid = proxied.transport.pid;
const smallListRss = peakRssMiB(proxyPid);
await direct.client.close();
await proxied.client.close();

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
const afterListRss = peakRssMiB(large.transport.pid);
for (let i = 0; i < toolCount; i++) {
  await large.client.callTool({ name: `search_${i}`, arguments: { query: "rust", limit: 5 } });
}
const afterCallsRss = peakRssMiB(large.transport.pid);
await large.client.close();

const d = summary(times.direct);
const p = summary(times.proxied);
const ms = (x) => x.toFixed(3);
console.log(`sequential tools/call round trips on echo, ${calls} per path, interleaved`);
console.log(`machine: ${cpus().length} CPUs, load average ${loadavg().map((l) => l.toFixed(2)).join(" ")}`);
console.log(`                 p50 ms    p99 ms   mean ms   calls/s`);
console.log(`direct         ${ms(d.p50).padStart(8)}  ${ms(d.p99).padStart(8)}  ${ms(d.mean).padStart(8)}  ${d.callsPerSecond.toFixed(0).padStart(8)}`);
console.log(`through proxy  ${ms(p.p50).padStart(8)}  ${ms(p.p99).padStart(8)}  ${ms(p.mean).padStart(8)}  ${p.callsPerSecond.toFixed(0).padStart(8)}`);
console.log(`p50 ratio (proxy / direct): ${(p.p50 / d.p50).toFixed(3)} (target <= 1.2)`);
console.log(`proxy peak RSS: ${smallListRss.toFixed(1)} MiB with the echo server (${calls + 300} calls)`);
console.log(`proxy peak RSS: ${afterListRss.toFixed(1)} MiB after listing ${listed} tools, ${afterCallsRss.toFixed(1)} MiB after calling each once (every validator compiled)`);
