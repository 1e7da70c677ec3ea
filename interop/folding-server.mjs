#!/usr/bin/env node
// An MCP server (stdio, newline-delimited JSON-RPC, no SDK) that reads the members of `params` as
// Go's encoding/json reads a struct's fields: without regard to case, the last matching one
// winning, `ſ` (U+017F) read as `s` and the Kelvin sign (U+212A) as `k`. So
// `tools/list {"Cursor": "2"}` is a request for page 2 here. It lists its tools one per page
// and records every line it receives, byte for byte, so a test can show what reached it.
//
//   node folding-server.mjs --record FILE

import { appendFileSync } from "node:fs";
import { onLines, send } from "./stdio-lines.mjs";

const argv = process.argv.slice(2);
const record = argv[0] === "--record" ? argv[1] : null;

const tools = [
  {
    name: "delete_rows",
    inputSchema: {
      type: "object",
      properties: { table: { type: "string", pattern: "^tmp_" }, limit: { type: "integer", maximum: 10 } },
      required: ["table", "limit"],
      additionalProperties: false,
    },
  },
  {
    name: "echo",
    inputSchema: { type: "object", properties: { message: { type: "string" } }, required: ["message"] },
  },
];

// A name as Go folds it for matching.
function fold(name) {
  return name.replace(/\u017f/g, "s").replace(/\u212a/g, "k").toLowerCase();
}

// The member `key` of `object` as Go's encoding/json reads it: the last member whose name folds
// like `key`.
function field(object, key) {
  if (object === null || typeof object !== "object") return undefined;
  let found;
  for (const [name, value] of Object.entries(object)) {
    if (fold(name) === fold(key)) found = value;
  }
  return found;
}

function handle(message) {
  const { id, method, params } = message;
  if (id === undefined || method === undefined) return null;
  switch (method) {
    case "initialize":
      return {
        jsonrpc: "2.0",
        id,
        result: {
          protocolVersion: field(params, "protocolVersion") ?? "2025-11-25",
          capabilities: { tools: {} },
          serverInfo: { name: "folding-server", version: "1.0.0" },
        },
      };
    case "tools/list": {
      const page = Number(field(params, "cursor") ?? 0);
      const result = { tools: tools.slice(page, page + 1) };
      if (page + 1 < tools.length) result.nextCursor = String(page + 1);
      return { jsonrpc: "2.0", id, result };
    }
    case "tools/call": {
      const name = field(params, "name");
      if (!tools.some((t) => t.name === name)) {
        return { jsonrpc: "2.0", id, error: { code: -32602, message: `Unknown tool: ${name}` } };
      }
      const args = JSON.stringify(field(params, "arguments") ?? {});
      return { jsonrpc: "2.0", id, result: { content: [{ type: "text", text: `ran ${name} with ${args}` }] } };
    }
    default:
      return { jsonrpc: "2.0", id, result: {} };
  }
}

onLines((line) => {
  if (record) appendFileSync(record, line + "\n");
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    return;
  }
  const response = handle(message);
  if (response !== null) send(response);
});
