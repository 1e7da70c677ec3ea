#!/usr/bin/env node
// Drives `toolschema proxy` with the official TypeScript SDK client for the tracing tests, and
// prints what it saw as one JSON document on stdout: each call's outcome, and the proxy's
// stderr lines (over stdio).
//
//   node traced-client.mjs calls -- COMMAND ARGS...          a valid call (with a traceparent
//                                                           in _meta), an invalid one (with a
//                                                           malformed traceparent), a tool error
//   node traced-client.mjs load N -- COMMAND ARGS...         N valid calls, 50 at a time
//   node traced-client.mjs calls --http URL                  the same against a proxy's
//                                                           Streamable HTTP endpoint

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

// The client's own span, as a traced caller would send it.
export const PARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

const argv = process.argv.slice(2);
const scenario = argv[0];
let rest = argv.slice(1);
let count = 0;
if (scenario === "load") {
  count = Number(rest[0]);
  rest = rest.slice(1);
}
let transport;
const stderr = [];
if (rest[0] === "--http") {
  transport = new StreamableHTTPClientTransport(new URL(rest[1]));
} else if (rest[0] === "--" && rest.length > 1) {
  transport = new StdioClientTransport({ command: rest[1], args: rest.slice(2), stderr: "pipe" });
  let buffer = "";
  transport.stderr.setEncoding("utf8");
  transport.stderr.on("data", (chunk) => {
    buffer += chunk;
    let newline;
    while ((newline = buffer.indexOf("\n")) !== -1) {
      stderr.push(buffer.slice(0, newline));
      buffer = buffer.slice(newline + 1);
    }
  });
} else {
  console.error("usage: traced-client.mjs calls|load N (-- COMMAND ARGS... | --http URL)");
  process.exit(64);
}

async function outcome(promise) {
  try {
    return { result: await promise };
  } catch (error) {
    return { error: { code: error.code, message: error.message } };
  }
}

const client = new Client({ name: "toolschema-traces", version: "1.0.0" });
await client.connect(transport);
await client.listTools();
const outcomes = {};
if (scenario === "calls") {
  outcomes.valid = await outcome(
    client.callTool({
      name: "search",
      arguments: { query: "documents" },
      _meta: { traceparent: PARENT, tracestate: "vendor=opaque" },
    }),
  );
  outcomes.invalid = await outcome(
    client.callTool({
      name: "search",
      arguments: { query: "ab" },
      _meta: { traceparent: "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01" },
    }),
  );
  outcomes.toolError = await outcome(
    client.callTool({ name: "search", arguments: { query: "tool-error" } }),
  );
} else if (scenario === "load") {
  let passed = 0;
  let failed = 0;
  for (let done = 0; done < count; done += 50) {
    const batch = [];
    for (let i = done; i < Math.min(count, done + 50); i++) {
      batch.push(outcome(client.callTool({ name: "search", arguments: { query: `query ${i}` } })));
    }
    for (const one of await Promise.all(batch)) {
      if (one.result && !one.result.isError) passed++;
      else failed++;
    }
  }
  outcomes.load = { passed, failed };
}
await client.close();
// The proxy's last lines (its report at exit) arrive as it ends.
if (transport instanceof StdioClientTransport) {
  await new Promise((resolve) => setTimeout(resolve, 100));
}
process.stdout.write(JSON.stringify({ outcomes, stderr }) + "\n");
process.exit(0);
