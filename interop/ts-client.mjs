#!/usr/bin/env node
// Drives an MCP server (or `toolschema proxy -- server`) with the official TypeScript SDK client
// and prints what the client saw as one JSON document on stdout.
//
//   node ts-client.mjs list -- COMMAND ARGS...             every tool, raw and as the client sees it
//   node ts-client.mjs everything -- COMMAND ARGS...       a session with server-everything
//   node ts-client.mjs filesystem DIR -- COMMAND ARGS...   a session with server-filesystem on DIR

import { spawn } from "node:child_process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { deserializeMessage, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const argv = process.argv.slice(2);
const split = argv.indexOf("--");
if (split < 1 || split === argv.length - 1) {
  console.error("usage: ts-client.mjs SCENARIO [ARGS] -- COMMAND ARGS...");
  process.exit(64);
}
const [scenario, ...scenarioArgs] = argv.slice(0, split);
const [command, ...commandArgs] = argv.slice(split + 1);

// The SDK's stdio transport, written out so each line the server sends is also kept exactly as
// received (the client's schema parsing reorders keys, so what it returns is not what was sent).
class RecordingStdioTransport {
  constructor(command, args) {
    this.command = command;
    this.args = args;
    this.rawLines = [];
    this.buffer = "";
  }
  async start() {
    this.child = spawn(this.command, this.args, { stdio: ["pipe", "pipe", "inherit"] });
    this.child.stdout.setEncoding("utf8");
    this.child.stdout.on("data", (chunk) => {
      this.buffer += chunk;
      let newline;
      while ((newline = this.buffer.indexOf("\n")) !== -1) {
        const line = this.buffer.slice(0, newline).replace(/\r$/, "");
        this.buffer = this.buffer.slice(newline + 1);
        this.rawLines.push(line);
        try {
          this.onmessage?.(deserializeMessage(line));
        } catch (error) {
          this.onerror?.(error);
        }
      }
    });
    this.child.on("close", () => this.onclose?.());
    await new Promise((resolve, reject) => {
      this.child.once("spawn", resolve);
      this.child.once("error", reject);
    });
  }
  async send(message) {
    this.child.stdin.write(serializeMessage(message));
  }
  async close() {
    this.child.stdin.end();
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
  return tools;
}

// A call's outcome: the result, or the JSON-RPC error it was answered with.
async function outcome(promise) {
  try {
    return { result: await promise };
  } catch (error) {
    return { error: { code: error.code, message: error.message } };
  }
}

function connectStdio() {
  return new StdioClientTransport({ command, args: commandArgs, stderr: "inherit" });
}

async function listScenario() {
  const transport = new RecordingStdioTransport(command, commandArgs);
  const client = new Client({ name: "toolschema-interop", version: "1.0.0" });
  await client.connect(transport);
  const tools = await listAll(client);
  await client.close();
  // Only the tools/list responses: results carrying a "tools" array.
  const rawToolPages = transport.rawLines.filter((line) => {
    try {
      return Array.isArray(JSON.parse(line).result?.tools);
    } catch {
      return false;
    }
  });
  return { rawToolPages, tools };
}

async function everythingScenario() {
  const client = new Client({ name: "toolschema-interop", version: "1.0.0" });
  const logs = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));
  const transport = connectStdio();
  await client.connect(transport);
  // Every message the client receives, in order. The SDK hands notifications to their handlers a
  // microtask later than responses, so a progress notification that arrives together with its
  // response reaches `onprogress` after the request is done and is dropped; what arrived is
  // checked here.
  const received = [];
  const deliver = transport.onmessage;
  transport.onmessage = (message, extra) => {
    received.push(message);
    deliver(message, extra);
  };
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
      { name: "trigger-long-running-operation", arguments: { duration: 0.3, steps: 3 } },
      undefined,
      { onprogress: (p) => progress.push(p) },
    ),
  );
  await client.setLoggingLevel("debug");
  await client.callTool({ name: "toggle-simulated-logging", arguments: {} });
  const deadline = Date.now() + 5000;
  while (logs.length === 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await client.callTool({ name: "toggle-simulated-logging", arguments: {} });
  await client.close();
  const done = (m) => (m.result?.content?.[0]?.text ?? "").startsWith("Long running operation completed");
  const wire = received
    .filter((m) => m.method === "notifications/progress" || done(m))
    .map((m) => (done(m) ? "result" : { progress: m.params.progress, total: m.params.total }));
  return { tools, valid, invalid, longRunning, progress, wire, logCount: logs.length };
}

async function filesystemScenario(dir) {
  const client = new Client({ name: "toolschema-interop", version: "1.0.0" });
  await client.connect(connectStdio());
  const tools = await listAll(client);
  const valid = {
    write: await outcome(
      client.callTool({ name: "write_file", arguments: { path: `${dir}/notes.txt`, content: "hello\n" } }),
    ),
    read: await outcome(client.callTool({ name: "read_text_file", arguments: { path: `${dir}/notes.txt` } })),
    list: await outcome(client.callTool({ name: "list_directory", arguments: { path: dir } })),
  };
  const invalid = {
    writeNumber: await outcome(
      client.callTool({ name: "write_file", arguments: { path: `${dir}/rejected.txt`, content: 42 } }),
    ),
    writeMissing: await outcome(
      client.callTool({ name: "write_file", arguments: { path: `${dir}/rejected.txt` } }),
    ),
  };
  await client.close();
  return { tools, valid, invalid };
}

const timer = setTimeout(() => {
  console.error(`ts-client: scenario ${scenario} did not finish within 60s`);
  process.exit(70);
}, 60_000);

let output;
if (scenario === "list") output = await listScenario();
else if (scenario === "everything") output = await everythingScenario();
else if (scenario === "filesystem") output = await filesystemScenario(scenarioArgs[0]);
else {
  console.error(`ts-client: unknown scenario ${scenario}`);
  process.exit(64);
}
clearTimeout(timer);
process.stdout.write(JSON.stringify(output) + "\n");
process.exit(0);
