#!/usr/bin/env node
// The client of scripts/bench-serve.sh: `toolschema serve --listen` with a catalog of TOOLS
// tools, called by CALLERS concurrent callers (keep-alive HTTP/1.1, one connection each) for
// SECONDS, each POSTing interceptor/invoke for tools/call requests, valid and invalid in turn.
// Every answer is checked (valid calls valid, invalid ones refused with toolschema's message).
// Prints decisions per second, p50/p99 per decision, errors, and the service's memory after
// loading the catalog and at its peak. The in-process figures come from the caller.
//
//   node bench-serve.mjs TOOLSCHEMA_BINARY CATALOG TOOL [--callers N] [--seconds N]

import http from "node:http";
import { memoryMiB, percentile, start } from "./http-load.mjs";
import { numberOption } from "./bench-options.mjs";

const [binary, catalog, tool, ...rest] = process.argv.slice(2);
const callers = numberOption(rest, "--callers", 64);
const seconds = numberOption(rest, "--seconds", 20);

const service = await start(
  binary,
  ["serve", "--listen", "127.0.0.1:0", "--catalog", catalog, "--max-concurrent", String(callers * 4)],
  /interceptors at (http:\/\/\S+)\n/,
);
const url = new URL(service.match[1]);
const loaded = memoryMiB(service.child.pid);

const bodies = [
  { arguments: { query: "rust", limit: 5 }, valid: true },
  { arguments: { query: "r", limit: 500 }, valid: false },
].map(({ arguments: args, valid }) => ({
  valid,
  text: JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "interceptor/invoke",
    params: { name: "toolschema/schema", event: "tools/call", phase: "request", payload: { name: tool, arguments: args } },
  }),
}));

function post(agent, body) {
  return new Promise((resolve, reject) => {
    const request = http.request(
      { host: url.hostname, port: url.port, path: url.pathname, method: "POST", agent,
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) } },
      (response) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk) => (text += chunk));
        response.on("end", () => resolve({ status: response.statusCode, text }));
      },
    );
    request.on("error", reject);
    request.end(body);
  });
}

const latencies = [];
let errors = 0;
const firstErrors = [];
const end = performance.now() + seconds * 1000;
const started = performance.now();
await Promise.all(
  Array.from({ length: callers }, async (_, caller) => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    for (let i = caller; performance.now() < end; i++) {
      const body = bodies[i % 2];
      const before = performance.now();
      try {
        const { status, text } = await post(agent, body.text);
        latencies.push(performance.now() - before);
        const result = JSON.parse(text).result;
        const right = status === 200 && result?.valid === body.valid &&
          (body.valid || result.messages?.[0]?.message?.startsWith("argument 'query'"));
        if (!right) {
          errors++;
          if (firstErrors.length < 3) firstErrors.push(`${status} ${text.slice(0, 200)}`);
        }
      } catch (e) {
        errors++;
        if (firstErrors.length < 3) firstErrors.push(String(e));
      }
    }
    agent.destroy();
  }),
);
const elapsed = (performance.now() - started) / 1000;
const peak = memoryMiB(service.child.pid);
service.child.kill("SIGTERM");
latencies.sort((a, b) => a - b);
const result = {
  callers,
  seconds: Math.round(elapsed * 10) / 10,
  decisions: latencies.length,
  decisions_per_second: Math.round(latencies.length / elapsed),
  p50_ms: Math.round(percentile(latencies, 50) * 1000) / 1000,
  p99_ms: Math.round(percentile(latencies, 99) * 1000) / 1000,
  errors,
  rss_after_load_mib: Math.round(loaded.rss * 10) / 10,
  peak_rss_mib: Math.round(peak.peak * 10) / 10,
};
console.log(JSON.stringify(result));
if (firstErrors.length) console.error(firstErrors.join("\n"));
if (errors > 0 || latencies.length === 0) process.exit(1);
