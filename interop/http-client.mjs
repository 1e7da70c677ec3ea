#!/usr/bin/env node
// Drives an MCP server over Streamable HTTP (StreamableHTTPClientTransport) or stdio with the
// official TypeScript SDK client, and prints what the client saw as one JSON document.
//
//   node http-client.mjs SCENARIO --url URL [--token TOKEN]
//   node http-client.mjs SCENARIO -- COMMAND ARGS...
//
// SCENARIO: `everything` (server-everything: tools, valid and invalid calls, progress during a
// long operation, sampling and elicitation round trips) or `recording` (interop/recording-server
// .mjs: valid and invalid calls, progress, a sampling round trip, a slow call), and for
// `toolschema proxy --server ...` (three servers behind one front: everything, time, web):
// `merged` (every page of the merged listing, a valid and an invalid call to each server's tool)
// or `faults --log FILE --stop FILE` (calls `time__get_current_time` and `web__echo` each in a
// loop of its own until FILE `--stop` exists, appending each outcome to `--log` as a JSON line,
// so that a test can kill and restart a server meanwhile; counts `tools/list_changed`).

import { appendFileSync, existsSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

const argv = process.argv.slice(2);
const scenario = argv[0];
const option = (name) => {
  const at = argv.indexOf(name);
  return at === -1 ? undefined : argv[at + 1];
};
const split = argv.indexOf("--");
const url = option("--url");
const token = option("--token");

function transport() {
  if (url) {
    const requestInit = token ? { headers: { Authorization: `Bearer ${token}` } } : undefined;
    return new StreamableHTTPClientTransport(new URL(url), { requestInit });
  }
  if (split === -1) {
    console.error("usage: http-client.mjs SCENARIO (--url URL [--token T] | -- COMMAND ARGS...)");
    process.exit(64);
  }
  const [command, ...args] = argv.slice(split + 1);
  return new StdioClientTransport({ command, args, stderr: "inherit" });
}

async function outcome(promise) {
  try {
    return { result: await promise };
  } catch (error) {
    return { error: { code: error.code, message: error.message } };
  }
}

/** Every tool of every page, sorted by name; `counted.pages` is set to the number of pages. */
async function listAll(client, counted = {}) {
  const tools = [];
  let cursor;
  counted.pages = 0;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    counted.pages += 1;
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  return tools.sort((a, b) => a.name.localeCompare(b.name));
}

/** A client that answers sampling and elicitation requests, recording them. */
function newClient(asked) {
  const client = new Client(
    { name: "toolschema-http-interop", version: "1.0.0" },
    { capabilities: { sampling: {}, elicitation: { form: {} } } },
  );
  client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
    asked.push("sampling/createMessage");
    const text = request.params.messages.map((m) => m.content?.text ?? "").join("; ");
    return {
      role: "assistant",
      content: { type: "text", text: `sampled: ${text}` },
      model: "interop-model",
      stopReason: "endTurn",
    };
  });
  client.setRequestHandler(ElicitRequestSchema, async () => {
    asked.push("elicitation/create");
    return { action: "accept", content: { name: "Ada", check: true, integer: 3 } };
  });
  return client;
}

async function everything() {
  const asked = [];
  const client = newClient(asked);
  await client.connect(transport());
  const tools = await listAll(client);
  const valid = {
    echo: await outcome(client.callTool({ name: "echo", arguments: { message: "hello" } })),
    sum: await outcome(client.callTool({ name: "get-sum", arguments: { a: 2, b: 3.5 } })),
    structured: await outcome(
      client.callTool({ name: "get-structured-content", arguments: { location: "Chicago" } }),
    ),
  };
  const invalid = {
    echoMissing: await outcome(client.callTool({ name: "echo", arguments: {} })),
    sumTypes: await outcome(client.callTool({ name: "get-sum", arguments: { a: "two", b: 3 } })),
    structuredEnum: await outcome(
      client.callTool({ name: "get-structured-content", arguments: { location: "Paris" } }),
    ),
  };
  const progress = [];
  const longRunning = await outcome(
    client.callTool(
      { name: "trigger-long-running-operation", arguments: { duration: 0.6, steps: 3 } },
      undefined,
      { onprogress: (p) => progress.push({ progress: p.progress, total: p.total }) },
    ),
  );
  const sampling = await outcome(
    client.callTool({ name: "trigger-sampling-request", arguments: { prompt: "hi", maxTokens: 5 } }),
  );
  const elicitation = await outcome(
    client.callTool({ name: "trigger-elicitation-request", arguments: {} }),
  );
  await client.close();
  return { tools, valid, invalid, longRunning, progress, sampling, elicitation, asked };
}

async function recording() {
  const asked = [];
  const client = newClient(asked);
  await client.connect(transport());
  // A call before any listing: the proxy lists the tools itself.
  const first = await outcome(client.callTool({ name: "search", arguments: { query: "x" } }));
  const tools = await listAll(client);
  const valid = await outcome(client.callTool({ name: "search", arguments: { query: "xyz" } }));
  const invalid = await outcome(
    client.callTool({ name: "search", arguments: { query: "xyz", limit: "many" } }),
  );
  const progress = [];
  const progressed = await outcome(
    client.callTool({ name: "progress", arguments: {} }, undefined, {
      onprogress: (p) => progress.push({ progress: p.progress, total: p.total }),
    }),
  );
  const sampling = await outcome(client.callTool({ name: "ask_client", arguments: {} }));
  const slow = await outcome(client.callTool({ name: "slow", arguments: { ms: 700 } }));
  await client.close();
  return { first, tools: tools.map((t) => t.name), valid, invalid, progressed, progress, sampling, slow, asked };
}

/** The merged listing of one front, with its pages counted. */
async function listing(client) {
  const counted = {};
  const names = (await listAll(client, counted)).map((t) => t.name);
  return { pages: counted.pages, names };
}

async function merged() {
  const client = newClient([]);
  await client.connect(transport());
  const listed = await listing(client);
  const call = (name, args) => outcome(client.callTool({ name, arguments: args }));
  const out = {
    listing: listed,
    valid: {
      everything: await call("everything__echo", { message: "hello" }),
      time: await call("time__get_current_time", { timezone: "UTC" }),
      web: await call("web__get-sum", { a: 2, b: 3 }),
    },
    invalid: {
      everything: await call("everything__echo", {}),
      time: await call("time__get_current_time", { timezone: 5 }),
      web: await call("web__get-sum", { a: "two", b: 3 }),
    },
    unknown: await call("echo", { message: "bare" }),
  };
  await client.close();
  return out;
}

async function faults() {
  const log = option("--log");
  const stop = option("--stop");
  let changed = 0;
  const client = newClient([]);
  client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
    changed += 1;
    appendFileSync(log, JSON.stringify({ changed }) + "\n");
  });
  await client.connect(transport());
  await listAll(client);
  const text = (r) => (r.result?.content ?? []).map((c) => c.text ?? "").join(" ");
  // One loop per server, so that one's slow calls never hold the other's back.
  let rounds = 0;
  const loop = async (server, name, args) => {
    let round = 0;
    while (!existsSync(stop)) {
      round += 1;
      rounds += 1;
      const r = await outcome(client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 }));
      const ok = r.result !== undefined && !r.result.isError;
      appendFileSync(log, JSON.stringify({ server, round, ok, text: r.error?.message ?? text(r) }) + "\n");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  await Promise.all([
    loop("time", "time__get_current_time", { timezone: "UTC" }),
    loop("web", "web__echo", { message: "hello" }),
  ]);
  const listed = await listing(client);
  await client.close();
  return { changed, rounds, listing: listed };
}

// `faults` runs until the test says stop, through a server's death and restart.
const limit = scenario === "faults" ? 180 : 60;
const timer = setTimeout(() => {
  console.error(`http-client: scenario ${scenario} did not finish within ${limit}s`);
  process.exit(70);
}, limit * 1000);
const scenarios = { everything, recording, merged, faults };
if (!scenarios[scenario]) {
  console.error(`http-client: unknown scenario ${scenario}`);
  process.exit(64);
}
const output = await scenarios[scenario]();
clearTimeout(timer);
process.stdout.write(JSON.stringify(output) + "\n");
process.exit(0);
