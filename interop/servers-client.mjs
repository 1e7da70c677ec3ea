#!/usr/bin/env node
// Drives `toolschema proxy --server ...` (many servers behind one Streamable HTTP front) with the
// official TypeScript SDK client, and prints what it saw as one JSON document.
//
//   node servers-client.mjs merged --url URL [--token TOKEN]
//     every page of the merged listing, a valid and an invalid call to each server's tool;
//   node servers-client.mjs faults --url URL [--token TOKEN] --log FILE --stop FILE
//     calls `time__get_current_time` and `web__echo` in turn until FILE `--stop` exists,
//     appending each outcome to `--log` as a JSON line (so that the test can kill and restart
//     a server meanwhile), and counts the `notifications/tools/list_changed` it hears.

import { existsSync, appendFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const argv = process.argv.slice(2);
const scenario = argv[0];
const option = (name) => {
  const at = argv.indexOf(name);
  return at === -1 ? undefined : argv[at + 1];
};
const url = option("--url");
const token = option("--token");

async function connect(onChanged) {
  const client = new Client({ name: "toolschema-servers-interop", version: "1.0.0" });
  if (onChanged) {
    client.setNotificationHandler(ToolListChangedNotificationSchema, onChanged);
  }
  const requestInit = token ? { headers: { Authorization: `Bearer ${token}` } } : undefined;
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit }));
  return client;
}

async function outcome(promise) {
  try {
    return { result: await promise };
  } catch (error) {
    return { error: { code: error.code, message: error.message } };
  }
}

async function listAll(client) {
  const tools = [];
  let cursor;
  let pages = 0;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    pages += 1;
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  return { pages, names: tools.map((t) => t.name).sort() };
}

async function merged() {
  const client = await connect();
  const listing = await listAll(client);
  const call = (name, args) => outcome(client.callTool({ name, arguments: args }));
  const out = {
    listing,
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
  const client = await connect(async () => {
    changed += 1;
    appendFileSync(log, JSON.stringify({ changed }) + "\n");
  });
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
  const listing = await listAll(client);
  await client.close();
  return { changed, rounds, listing };
}

const timer = setTimeout(() => {
  console.error(`servers-client: scenario ${scenario} did not finish within 120s`);
  process.exit(70);
}, 120_000);
const scenarios = { merged, faults };
if (!scenarios[scenario]) {
  console.error(`servers-client: unknown scenario ${scenario}`);
  process.exit(64);
}
const output = await scenarios[scenario]();
clearTimeout(timer);
process.stdout.write(JSON.stringify(output) + "\n");
process.exit(0);
