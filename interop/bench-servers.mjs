#!/usr/bin/env node
// The many-servers benchmark's client (TypeScript SDK, StreamableHTTPClientTransport): three
// bench-server.mjs servers over Streamable HTTP, reached through one front
// (`toolschema proxy --listen --server a=URL --server b=URL --server c=URL`, sessions calling
// a__echo, b__echo and c__echo in turn) and through three separate proxies
// (`toolschema proxy --listen --upstream URL` each, sessions spread over them calling echo), in
// interleaved rounds of one run. Prints calls per second, p50 and p99 latency, errors.
//
//   node bench-servers.mjs TOOLSCHEMA_BINARY [--sessions N] [--seconds N] [--rounds N]

import { cpus, loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { closeAll, connectAll, load, percentile, start } from "./http-load.mjs";
import { numberOption } from "./bench-options.mjs";

const [binary, ...rest] = process.argv.slice(2);
const option = (name, fallback) => numberOption(rest, name, fallback);
const sessions = option("--sessions", 24);
const seconds = option("--seconds", 20);
const rounds = option("--rounds", 2);
const serverScript = fileURLToPath(new URL("./bench-server.mjs", import.meta.url));
const names = ["a", "b", "c"];

const started = [];
const servers = [];
for (const _ of names) {
  const port = 20000 + Math.floor(Math.random() * 20000);
  const server = await start("node", [serverScript, "--http", String(port)], /listening on/);
  started.push(server);
  servers.push(`http://127.0.0.1:${port}/mcp`);
}
const listen = ["proxy", "--listen", "127.0.0.1:0", "--max-sessions", String(sessions * 2)];
const serving = /serving MCP at (http:\/\/\S+)\n/;
const front = await start(
  binary,
  [...listen, ...names.flatMap((name, i) => ["--server", `${name}=${servers[i]}`])],
  serving,
);
started.push(front);
const separate = [];
for (const url of servers) {
  const proxy = await start(binary, [...listen, "--upstream", url], serving);
  started.push(proxy);
  separate.push(proxy.match[1]);
}

// Session i of the front calls server i % 3; of the separate proxies, it talks to proxy i % 3.
const spread = async (urls) => {
  const clients = [];
  for (let i = 0; i < sessions; i++) {
    clients.push(...(await connectAll(urls[i % urls.length], 1)));
  }
  return clients;
};
const paths = {
  front: { clients: await spread([front.match[1]]), tool: (i) => `${names[i % 3]}__echo` },
  separate: { clients: await spread(separate), tool: () => "echo" },
};
for (const path of Object.values(paths)) {
  path.latencies = [];
  path.errors = 0;
  path.kinds = {};
  path.ms = 0;
}
const roundMs = (seconds * 1000) / rounds;
for (let round = 0; round < rounds; round++) {
  for (const path of Object.values(paths)) {
    const begun = performance.now();
    const { latencies, errors, errorKinds } = await load(path.clients, roundMs, { tool: path.tool });
    path.ms += performance.now() - begun;
    path.latencies.push(...latencies);
    path.errors += errors;
    Object.assign(path.kinds, errorKinds);
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
for (const process of started) process.child.kill("SIGTERM");

const f = (x, digits = 2) => x.toFixed(digits);
console.log(
  `toolschema proxy, three servers: ${sessions} sessions calling echo for ${seconds} s per path, ` +
    `${rounds} interleaved rounds; ${cpus().length} cores, load ${loadavg().map((l) => f(l)).join(" ")}`,
);
console.log("path       calls    errors  calls/s   p50 ms   p99 ms");
for (const [name, x] of Object.entries(figures)) {
  console.log(
    `${name.padEnd(10)} ${String(x.calls).padStart(7)} ${String(x.errors).padStart(8)} ${f(x.callsPerSecond, 0).padStart(8)} ${f(x.p50).padStart(8)} ${f(x.p99).padStart(8)}`,
  );
}
console.log(
  `throughput front/separate: ${f(figures.front.callsPerSecond / figures.separate.callsPerSecond)} (goal >= 0.9)`,
);
console.log(`p50 front/separate: ${f(figures.front.p50 / figures.separate.p50)}`);
const errors = figures.front.errors + figures.separate.errors;
if (errors > 0) {
  for (const [name, path] of Object.entries(paths)) console.error(name, path.kinds);
}
process.exit(errors === 0 && figures.front.calls > 0 && figures.separate.calls > 0 ? 0 : 1);
