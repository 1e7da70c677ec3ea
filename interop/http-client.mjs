#!/usr/bin/env node
// Drives an MCP server over Streamable HTTP (StreamableHTTPClientTransport) or stdio with the
// official TypeScript SDK client, and prints what the client saw as one JSON document.
//
//   node http-client.mjs SCENARIO --url URL [--token TOKEN]
//   node http-client.mjs SCENARIO -- COMMAND ARGS...
//
// SCENARIO: `everything` (server-everything: tools, valid and invalid calls, progress during a
// long operation, sampling and elicitation round trips) or `recording` (interop/recording-server
// .mjs: valid and invalid calls, progress, a sampling round trip, a slow call).

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
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

async function listAll(client) {
  const tools = [];
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
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

const timer = setTimeout(() => {
  console.error(`http-client: scenario ${scenario} did not finish within 60s`);
  process.exit(70);
}, 60_000);
const scenarios = { everything, recording };
if (!scenarios[scenario]) {
  console.error(`http-client: unknown scenario ${scenario}`);
  process.exit(64);
}
const output = await scenarios[scenario]();
clearTimeout(timer);
process.stdout.write(JSON.stringify(output) + "\n");
process.exit(0);
