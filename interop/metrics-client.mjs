#!/usr/bin/env node
// Makes a known mix of tools/call requests through a proxy with the official TypeScript SDK
// client over Streamable HTTP, for the metrics test to count, and prints what each got.
//
//   node metrics-client.mjs URL VALID INVALID
//
// VALID calls to `echo` with a message, INVALID calls to `echo` without one (the proxy refuses
// them: `required`), one `get-sum` with a string for a number (`type`), and one call to a tool
// no server lists (refused: a made-up name must not become a label).

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, valid, invalid] = process.argv.slice(2);
if (!url || valid === undefined || invalid === undefined) {
  console.error("usage: metrics-client.mjs URL VALID INVALID");
  process.exit(64);
}

async function outcome(promise) {
  try {
    const result = await promise;
    return result.isError ? "tool_error" : "ok";
  } catch (error) {
    return `error ${error.code}`;
  }
}

const client = new Client({ name: "toolschema-metrics-interop", version: "1.0.0" });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
await client.listTools();
const seen = [];
for (let i = 0; i < Number(valid); i++) {
  seen.push(await outcome(client.callTool({ name: "echo", arguments: { message: `hi ${i}` } })));
}
for (let i = 0; i < Number(invalid); i++) {
  seen.push(await outcome(client.callTool({ name: "echo", arguments: {} })));
}
seen.push(await outcome(client.callTool({ name: "get-sum", arguments: { a: "two", b: 3 } })));
seen.push(await outcome(client.callTool({ name: "made-up-tool", arguments: {} })));
await client.close();
console.log(JSON.stringify({ seen }));
