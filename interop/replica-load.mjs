#!/usr/bin/env node
// The clients of the replica failover run (scripts/bench-replicas.sh, tests/replicas_failover.rs):
// calls through a load balancer in front of `toolschema proxy` replicas, one of which is killed
// (SIGKILL) during the run. Prints one JSON object: what each call's client saw.
//
//   node replica-load.mjs URL [--clients N] [--sessions N] [--seconds N] [--kill-pid PID]
//     [--kill-at SECONDS] [--timeout-ms MS] [--settle-ms MS]
//
// `--clients` 2026-07-28 clients (plain POSTs, no session, the revision in `_meta`) and
// `--sessions` 2025-11-25 sessions of the TypeScript SDK client call in a loop: echo and add,
// and every fifth call of each client has arguments the tool's schema refuses. Each call ends
// one of three ways:
// - served: the right answer (echo's own message, the right sum, or for an invalid call the
//   proxy's refusal, `isError` with the reason);
// - failed: the client was told (an HTTP error, a JSON-RPC error, a broken connection), grouped
//   by what it saw; a call with no answer after `--timeout-ms` is failed as `timeout`;
// - wrong: an answer that is not the right one (a silent wrong answer): counted apart.
// After the kill, `recoveryMs` is from the kill to the end of the last failed call;
// `lastFailedStartMs` is from the kill to the start of the last failed call (negative: every
// failed call was under way at the kill); `failedAfterSettle` counts failed calls that started
// more than `--settle-ms` after the kill.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { percentile, sleep } from "./http-load.mjs";

const [url, ...rest] = process.argv.slice(2);
const option = (name, fallback) => {
  const at = rest.lastIndexOf(name);
  return at === -1 ? fallback : Number(rest[at + 1]);
};
const clients = option("--clients", 64);
const sessions = option("--sessions", 0);
const seconds = option("--seconds", 30);
const killPid = option("--kill-pid", 0);
const killAt = option("--kill-at", 10);
const timeoutMs = option("--timeout-ms", 10_000);
const settleMs = option("--settle-ms", 0);
if (!url) {
  process.stderr.write("usage: node replica-load.mjs URL [--clients N] [--sessions N] [--seconds N] ...\n");
  process.exit(64);
}

const MODERN = "2026-07-28";
const calls = [];
let killedAt = null;

/** The n-th call of client `who`: its name, arguments, and what a right answer says. */
function nth(who, n) {
  if (n % 5 === 4) {
    // Invalid on purpose: the proxy refuses it, and the upstream must never see it.
    return n % 2 === 0
      ? { name: "echo", arguments: { message: 42 }, refusal: "argument 'message' must be a string" }
      : { name: "add", arguments: { a: "1", b: 2 }, refusal: "argument 'a' must be an integer" };
  }
  if (n % 2 === 0) {
    const message = `${who}-${n}`;
    return { name: "echo", arguments: { message }, text: `echo: ${message}` };
  }
  return { name: "add", arguments: { a: n, b: 7 }, text: String(n + 7) };
}

/** Whether `result` is the right answer to `call`. */
function right(call, result) {
  const text = result?.content?.[0]?.text;
  if (call.refusal) return result?.isError === true && typeof text === "string" && text.startsWith(call.refusal);
  return result?.isError !== true && text === call.text;
}

/** What a thrown error says, with the cause undici hides behind "fetch failed". */
function describe(error) {
  if (error?.name === "TimeoutError" || error?.name === "AbortError") return "timeout";
  const cause = error?.cause;
  const why = cause ? ` (${cause.code ?? cause.name}: ${cause.message})` : "";
  return `${error?.message ?? error}${why}`.slice(0, 200);
}

/** One 2026-07-28 request: POST, the answer as JSON or in an event stream. */
async function modernCall(id, call) {
  const body = {
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: {
      name: call.name,
      arguments: call.arguments,
      _meta: { "io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {} },
    },
  };
  const response = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": MODERN,
      "mcp-method": "tools/call",
      "mcp-name": call.name,
    },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await response.text();
  if (!response.ok) return { told: `HTTP ${response.status}: ${text.trim().split("\n")[0].slice(0, 120)}` };
  const messages = (response.headers.get("content-type") ?? "").includes("text/event-stream")
    ? text
        .split("\n")
        .filter((line) => line.startsWith("data:"))
        .map((line) => JSON.parse(line.slice(5)))
    : [JSON.parse(text)];
  const answer = messages.find((m) => m.id === id && ("result" in m || "error" in m));
  if (!answer) return { told: "no answer in the response" };
  if (answer.error) return { told: `JSON-RPC error ${answer.error.code}: ${answer.error.message}` };
  return { result: answer.result };
}

async function modernClient(who, end) {
  for (let n = 0; performance.now() < end; n++) {
    const call = nth(`c${who}`, n);
    await measure(call, () => modernCall(`c${who}-${n}`, call));
  }
}

async function sessionClient(who, end) {
  const transport = new StreamableHTTPClientTransport(new URL(url));
  const client = new Client({ name: `replica-session-${who}`, version: "1.0.0" });
  await client.connect(transport);
  for (let n = 0; performance.now() < end; n++) {
    const call = nth(`s${who}`, n);
    await measure(call, async () => {
      try {
        const result = await client.callTool({ name: call.name, arguments: call.arguments }, undefined, {
          timeout: timeoutMs,
        });
        return { result };
      } catch (error) {
        return { told: /timed out/i.test(String(error?.message)) ? "timeout" : describe(error) };
      }
    });
  }
  await transport.terminateSession().catch(() => {});
  await client.close();
}

async function measure(call, run) {
  const started = performance.now();
  let outcome;
  try {
    outcome = await run();
  } catch (error) {
    outcome = { told: describe(error) };
  }
  const ended = performance.now();
  const entry = { started, ended, ms: ended - started, invalid: Boolean(call.refusal) };
  if (outcome.told) entry.told = outcome.told;
  else if (!right(call, outcome.result)) entry.wrong = { call, result: outcome.result };
  calls.push(entry);
  // A failed call is not retried at once: a client would back off a little.
  if (outcome.told) await sleep(20);
}

const begin = performance.now();
const end = begin + seconds * 1000;
const killer = killPid
  ? sleep(killAt * 1000).then(() => {
      process.kill(killPid, "SIGKILL");
      killedAt = performance.now();
    })
  : Promise.resolve();
await Promise.all([
  killer,
  ...Array.from({ length: clients }, (_, i) => modernClient(i, end)),
  ...Array.from({ length: sessions }, (_, i) => sessionClient(i, end)),
]);

const served = calls.filter((c) => !c.told && !c.wrong);
const failed = calls.filter((c) => c.told);
const wrong = calls.filter((c) => c.wrong);
const latencies = served.map((c) => c.ms).sort((a, b) => a - b);
const seen = {};
for (const c of failed) seen[c.told] = (seen[c.told] ?? 0) + 1;
const afterKill = killedAt === null ? [] : failed.filter((c) => c.ended >= killedAt);
const lastFailure = afterKill.reduce((last, c) => Math.max(last, c.ended), killedAt ?? 0);
const round = (ms) => Math.round(ms * 10) / 10;
process.stdout.write(
  JSON.stringify({
    clients,
    sessions,
    seconds,
    calls: calls.length,
    served: served.length,
    servedInvalid: served.filter((c) => c.invalid).length,
    failed: failed.length,
    wrong: wrong.length,
    wrongSamples: wrong.slice(0, 5).map((c) => c.wrong),
    seen,
    timeouts: seen.timeout ?? 0,
    p50Ms: latencies.length ? round(percentile(latencies, 50)) : null,
    p99Ms: latencies.length ? round(percentile(latencies, 99)) : null,
    killedAtMs: killedAt === null ? null : round(killedAt - begin),
    failedBeforeKill: killedAt === null ? failed.length : failed.filter((c) => c.ended < killedAt).length,
    recoveryMs: killedAt === null ? null : round(lastFailure - killedAt),
    lastFailedStartMs: afterKill.length ? round(Math.max(...afterKill.map((c) => c.started)) - killedAt) : null,
    failedAfterSettle: killedAt === null ? 0 : failed.filter((c) => c.started > killedAt + settleMs).length,
    servedAfterSettle: killedAt === null ? 0 : served.filter((c) => c.started > killedAt + settleMs).length,
  }) + "\n",
);
