#!/usr/bin/env node
// An MCP server (stdio, newline-delimited JSON-RPC, no SDK) whose answers are odd or wrong in
// the ways a client must survive: an answer to a request nobody sent, a result that is not a
// CallToolResult, a line with a byte order mark, a float id, an answer that comes after the
// client gave up (after --late-ms milliseconds, 2500 unless given), and a listing that pages
// forever (--page-forever). Its tool `correct` answers correctly, after --slow-ms milliseconds
// (at once unless given).
//
//   node lying-server.mjs [--page-forever] [--late-ms N] [--slow-ms N]

import { onLines, send } from "./stdio-lines.mjs";

const pageForever = process.argv.includes("--page-forever");
const lateFlag = process.argv.indexOf("--late-ms");
const lateMs = lateFlag >= 0 ? Number(process.argv[lateFlag + 1]) : 2500;
const slowFlag = process.argv.indexOf("--slow-ms");
const slowMs = slowFlag >= 0 ? Number(process.argv[slowFlag + 1]) : 0;
const object = {
  type: "object",
  properties: { note: { type: "string", maxLength: 20 } },
  additionalProperties: false,
};
const tools = ["wrong_id", "no_content", "bom", "float_id", "late", "correct"].map((name) => ({
  name,
  inputSchema: object,
}));

const text = (t) => ({ content: [{ type: "text", text: t }] });

// The arguments checked against the tools' one schema: the problem, or null when they fit.
function problem(args) {
  if (args?.note !== undefined && (typeof args.note !== "string" || [...args.note].length > 20)) {
    return "note must be a string of 20 characters at most";
  }
  if (args !== undefined && Object.keys(args).some((k) => k !== "note")) return "unknown argument";
  return null;
}

function answer(id, name, args) {
  const why = problem(args);
  if (why !== null && name !== "wrong_id" && name !== "late") {
    send({ jsonrpc: "2.0", id, result: { ...text(why), isError: true } });
    return;
  }
  switch (name) {
    case "wrong_id":
      // Answers a request that was never sent, and never the one that was.
      send({ jsonrpc: "2.0", id: `${id}-other`, result: text("for someone else") });
      return;
    case "no_content":
      send({ jsonrpc: "2.0", id, result: { structured: true } });
      return;
    case "bom":
      // A byte order mark before the line: still one JSON-RPC message.
      process.stdout.write("\uFEFF" + JSON.stringify({ jsonrpc: "2.0", id, result: text("bom") }) + "\n");
      return;
    case "float_id":
      // The same number written as a float: JSON-RPC ids are compared as written.
      process.stdout.write(`{"jsonrpc":"2.0","id":${id}.0,"result":{"content":[]}}\n`);
      return;
    case "late":
      // Answers only after the client's timeout: a late answer is not a fault of the protocol.
      setTimeout(() => send({ jsonrpc: "2.0", id, result: text("late") }), lateMs);
      return;
    default:
      if (slowMs > 0) setTimeout(() => send({ jsonrpc: "2.0", id, result: text("ok") }), slowMs);
      else send({ jsonrpc: "2.0", id, result: text("ok") });
  }
}

function handle(message) {
  const { id, method, params } = message;
  if (id === undefined) return;
  if (method === "initialize") {
    send({
      jsonrpc: "2.0",
      id,
      result: {
        protocolVersion: params?.protocolVersion ?? "2025-11-25",
        capabilities: { tools: {} },
        serverInfo: { name: "lying-server", version: "1.0.0" },
      },
    });
  } else if (method === "ping") {
    send({ jsonrpc: "2.0", id, result: {} });
  } else if (method === "tools/list") {
    const page = Number(params?.cursor ?? 0);
    const result = pageForever ? { tools: [], nextCursor: String(page + 1) } : { tools };
    send({ jsonrpc: "2.0", id, result });
  } else if (method === "tools/call") {
    if (params === null || typeof params !== "object" || (params.arguments !== undefined &&
        (params.arguments === null || typeof params.arguments !== "object" || Array.isArray(params.arguments)))) {
      send({ jsonrpc: "2.0", id, error: { code: -32602, message: "arguments must be an object" } });
      return;
    }
    answer(id, params.name, params.arguments);
  } else {
    send({ jsonrpc: "2.0", id, error: { code: -32601, message: `no method ${method}` } });
  }
}

onLines((line) => {
  try {
    handle(JSON.parse(line));
  } catch {
    // not JSON, or not a message it can read: nothing to answer
  }
});
