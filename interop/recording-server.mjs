#!/usr/bin/env node
// A small MCP server (stdio, newline-delimited JSON-RPC, no SDK) that records every line it
// receives, byte for byte, so tests can prove what reached the server and what did not.
// It also misbehaves on request: crashes, malformed and oversized output, results that break
// their outputSchema, tool list changes, pagination, server-to-client requests.
//
//   node recording-server.mjs [--record FILE] [--page-size N] [--extra-tools N] [--fail-list]
//                             [--crash-on-list] [--repeat-cursor] [--wide-tool N]

import { appendFileSync } from "node:fs";
import { onLines, send } from "./stdio-lines.mjs";

const options = {
  record: null,
  pageSize: 0,
  extraTools: 0,
  wideTool: 0,
  failList: false,
  crashOnList: false,
  repeatCursor: false,
};
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const flag = argv[i];
  if (flag === "--fail-list") {
    options.failList = true;
    continue;
  }
  if (flag === "--repeat-cursor") {
    // Every page names the same next page: a listing that never ends.
    options.repeatCursor = true;
    continue;
  }
  if (flag === "--crash-on-list") {
    options.crashOnList = true;
    continue;
  }
  const value = argv[++i];
  if (flag === "--record") options.record = value;
  else if (flag === "--page-size") options.pageSize = Number(value);
  else if (flag === "--extra-tools") options.extraTools = Number(value);
  else if (flag === "--wide-tool") options.wideTool = Number(value);
  else {
    process.stderr.write(`recording-server: unknown option ${flag}\n`);
    process.exit(64);
  }
}

// Key order and unknown fields are deliberate: a snapshot must keep both.
const tools = [
  {
    name: "search",
    description: "Search the documents.",
    "x-owner": "docs-team",
    inputSchema: {
      type: "object",
      properties: {
        query: { type: "string", minLength: 3 },
        limit: { type: "integer", minimum: 1, maximum: 100 },
      },
      required: ["query"],
      additionalProperties: false,
    },
    outputSchema: {
      type: "object",
      properties: { total: { type: "integer" }, query: { type: "string" } },
      required: ["total"],
    },
    annotations: { readOnlyHint: true },
  },
  {
    inputSchema: {
      additionalProperties: false,
      required: ["message"],
      properties: { message: { type: "string" } },
      type: "object",
    },
    name: "echo",
  },
  { name: "delete_everything", inputSchema: { type: "object" } },
  { name: "crash", inputSchema: { type: "object" } },
  { name: "slow", inputSchema: { type: "object", properties: { ms: { type: "integer" } } } },
  { name: "malformed_then_answer", inputSchema: { type: "object" } },
  { name: "big", inputSchema: { type: "object", properties: { bytes: { type: "integer" } } } },
  { name: "change_tools", inputSchema: { type: "object" } },
  { name: "progress", inputSchema: { type: "object" } },
  { name: "ask_client", inputSchema: { type: "object" } },
];
for (let i = 0; i < options.extraTools; i++) {
  tools.push({
    name: `extra_${i}`,
    inputSchema: { type: "object", properties: { n: { type: "integer", maximum: i } } },
  });
}

// A closed tool with many declared arguments (`wide`), for the cost of checking large calls.
if (options.wideTool > 0) {
  const properties = {};
  for (let i = 0; i < options.wideTool; i++) properties[`field_${i}`] = { type: "string" };
  tools.push({ name: "wide", inputSchema: { type: "object", properties, additionalProperties: false } });
}

function record(line) {
  if (options.record) appendFileSync(options.record, line + "\n");
}

const waiting = new Map(); // server-to-client request id -> resolve

function text(t) {
  return { content: [{ type: "text", text: t }] };
}

async function callTool(params, id) {
  const args = params.arguments ?? {};
  switch (params.name) {
    case "search": {
      if (args.query === "bad-output") {
        return { ...text("bad"), structuredContent: { total: "many" } };
      }
      if (args.query === "no-structured") return text("nothing structured");
      if (args.query === "tool-error") return { ...text("search backend down"), isError: true };
      const result = { total: args.limit ?? 10, query: args.query };
      return { ...text(JSON.stringify(result)), structuredContent: result };
    }
    case "echo":
      return text(`echo: ${args.message}`);
    case "wide":
      return text(`${Object.keys(args).length} arguments`);
    case "delete_everything":
      return text("deleted everything");
    case "crash":
      process.stderr.write("recording-server: fatal: crash requested\n");
      process.exit(3);
      return null;
    case "slow":
      await new Promise((resolve) => setTimeout(resolve, args.ms ?? 1000));
      return text("slow done");
    case "malformed_then_answer":
      process.stdout.write("this line is not JSON\n");
      return text("answered after a malformed line");
    case "big":
      return text("x".repeat(args.bytes ?? 1000));
    case "change_tools": {
      const search = tools.find((t) => t.name === "search");
      search.inputSchema.properties.limit.maximum = 5;
      send({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
      return text("limit maximum is now 5");
    }
    case "progress": {
      const token = params._meta?.progressToken;
      for (let i = 1; i <= 3; i++) {
        if (token !== undefined) {
          send({
            jsonrpc: "2.0",
            method: "notifications/progress",
            params: { progressToken: token, progress: i, total: 3 },
          });
        }
      }
      send({
        jsonrpc: "2.0",
        method: "notifications/message",
        params: { level: "info", logger: "recording-server", data: "progress done" },
      });
      return text("progress sent");
    }
    case "ask_client": {
      const askId = `srv-${id}`;
      const answer = new Promise((resolve) => waiting.set(askId, resolve));
      send({
        jsonrpc: "2.0",
        id: askId,
        method: "sampling/createMessage",
        params: { messages: [], maxTokens: 1 },
      });
      const response = await answer;
      return text(JSON.stringify(response));
    }
    default:
      return null;
  }
}

async function handle(line) {
  record(line);
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    return;
  }
  const { id, method, params } = message;
  if (method === undefined) {
    if (waiting.has(id)) {
      waiting.get(id)(message);
      waiting.delete(id);
    }
    return;
  }
  if (id === undefined) return; // notifications are only recorded
  switch (method) {
    case "initialize":
      send({
        jsonrpc: "2.0",
        id,
        result: {
          protocolVersion: params?.protocolVersion ?? "2025-11-25",
          capabilities: { tools: { listChanged: true }, logging: {} },
          serverInfo: { name: "recording-server", version: "1.0.0" },
        },
      });
      return;
    case "ping":
      send({ jsonrpc: "2.0", id, result: {} });
      return;
    case "tools/list": {
      if (options.crashOnList) {
        process.stderr.write("recording-server: fatal: crash on tools/list requested\n");
        process.exit(4);
      }
      if (options.failList) {
        send({ jsonrpc: "2.0", id, error: { code: -32603, message: "listing is broken" } });
        return;
      }
      const start = params?.cursor ? Number(params.cursor.replace("page-", "")) : 0;
      const size = options.pageSize > 0 ? options.pageSize : tools.length;
      const page = tools.slice(start, start + size);
      const result = { tools: page };
      if (start + size < tools.length) result.nextCursor = `page-${start + size}`;
      if (options.repeatCursor) result.nextCursor = "page-1";
      send({ jsonrpc: "2.0", id, result });
      return;
    }
    case "tools/call": {
      const result = await callTool(params ?? {}, id);
      if (result === null) {
        send({ jsonrpc: "2.0", id, error: { code: -32602, message: `Unknown tool: ${params?.name}` } });
      } else {
        send({ jsonrpc: "2.0", id, result });
      }
      return;
    }
    default:
      // Methods the server does not know are echoed back, so pass-through can be checked.
      send({ jsonrpc: "2.0", id, result: { echoed: { method, params: params ?? null } } });
  }
}

onLines(handle);
