// The pieces the HTTP benchmark (bench-http-client.mjs) and the soak (soak-http.mjs) share:
// starting a process and waiting for its ready line, many TypeScript SDK client sessions calling
// the echo tool of bench-server.mjs in a loop, percentiles, a process's memory.

import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

/** Start a process and resolve once its stderr matches `ready`, with the match; its stderr is
 * kept (the last 64 KiB) in `child.stderrTail`. */
export function start(command, args, ready) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderrTail = "";
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk) => {
      child.stderrTail = (child.stderrTail + chunk).slice(-65536);
      if (child.ready) return;
      stderr += chunk;
      const match = stderr.match(ready);
      if (match) {
        child.ready = true;
        resolve({ child, match });
      }
    });
    child.on("exit", (code) => reject(new Error(`${command} exited (${code}): ${stderr}`)));
  });
}

export function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** A process's resident memory now and at its peak, in MiB. */
export function memoryMiB(pid) {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = (name) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)[1]);
  return { rss: kib("VmRSS") / 1024, peak: kib("VmHWM") / 1024 };
}

/** Open `sessions` sessions to `url`, the i-th with `headers(i)` on its requests. */
export async function connectAll(url, sessions, headers = () => ({})) {
  const clients = [];
  for (let i = 0; i < sessions; i++) {
    const transport = new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: headers(i) },
    });
    const client = new Client({ name: `bench-${i}`, version: "1.0.0" });
    await client.connect(transport);
    await client.listTools();
    clients.push({ client, transport });
  }
  return clients;
}

/**
 * Every session calls echo (or the tool `tool(i)` names for session i) in a loop for `ms` (waiting `intervalMs`, give or take a fifth,
 * between its calls; each call failing after `timeoutMs`); the latencies in ms of the calls
 * answered with their own message, and the errors: every other outcome, counted by its message.
 */
export async function load(clients, ms, { intervalMs = 0, timeoutMs, tool = () => "echo" } = {}) {
  const latencies = [];
  const errorKinds = {};
  let errors = 0;
  const fail = (what) => {
    errors++;
    const kind = String(what).slice(0, 200);
    errorKinds[kind] = (errorKinds[kind] ?? 0) + 1;
  };
  const end = performance.now() + ms;
  const options = timeoutMs === undefined ? undefined : { timeout: timeoutMs };
  await Promise.all(
    clients.map(async ({ client }, i) => {
      let n = 0;
      // Sessions that wait between calls start spread over one interval.
      if (intervalMs > 0) await sleep(Math.random() * intervalMs);
      while (performance.now() < end) {
        const message = `s${i}-${n++}`;
        const started = performance.now();
        try {
          const result = await client.callTool({ name: tool(i), arguments: { message } }, undefined, options);
          if (result.isError) fail(`tool error: ${result.content?.[0]?.text}`);
          else if (result.content?.[0]?.text !== message) fail("an answer that is not the call's message");
          else latencies.push(performance.now() - started);
        } catch (error) {
          // "fetch failed" alone says nothing: undici puts what happened to the connection in
          // the cause (a code such as UND_ERR_SOCKET or ECONNRESET, and its own message).
          const cause = error?.cause;
          const why = cause ? ` (${cause.code ?? cause.name}: ${cause.message})` : "";
          fail(`${error?.message ?? error}${why}`);
        }
        if (intervalMs > 0) await sleep(intervalMs * (0.8 + 0.4 * Math.random()));
      }
    }),
  );
  return { latencies, errors, errorKinds };
}

export async function closeAll(clients) {
  for (const { client, transport } of clients) {
    await transport.terminateSession().catch(() => {});
    await client.close();
  }
}

export function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
