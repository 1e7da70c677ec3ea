#!/usr/bin/env node
// The one upstream of the replica failover run (scripts/bench-replicas.sh and
// tests/replicas_failover.rs): a Streamable HTTP MCP server on Node's own `http` that speaks
// 2026-07-28 (no session: the revision in each request's `_meta`) and 2025-11-25 (`initialize`,
// sessions any replica of the proxy may carry on, since they live here). It judges every
// tools/call as it arrives, before answering, with Ajv against the inputSchema it lists: `GET
// /stats` answers with the calls per tool, how many its schemas refuse (the proxy must let none
// through), the first of those, the sessions opened, those still open (no DELETE ended them)
// and the requests naming a session it does not have.
//
//   PORT=N node replica-upstream.mjs
//
// Prints `listening on PORT` on stderr once it accepts connections.

import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { validatorFor } from "./schema-validator.mjs";
import { answerInitialize, json } from "./upstream-wire.mjs";

const MODERN = "2026-07-28";
const tools = [
  {
    name: "echo",
    description: "Echoes back the message.",
    inputSchema: {
      type: "object",
      properties: { message: { type: "string", maxLength: 64 } },
      required: ["message"],
      additionalProperties: false,
    },
  },
  {
    name: "add",
    description: "Adds two integers.",
    inputSchema: {
      type: "object",
      properties: { a: { type: "integer" }, b: { type: "integer" } },
      required: ["a", "b"],
      additionalProperties: false,
    },
  },
];
const judges = new Map(tools.map((tool) => [tool.name, validatorFor(tool.inputSchema)]));
const stats = { calls: {}, invalid: 0, invalidSamples: [], sessions: 0, unknownSession: 0 };
const sessions = new Set();

/** Judge a tools/call as it arrives: count it, and count it invalid when its schema says so. */
function judge(params) {
  const name = params?.name;
  stats.calls[name] = (stats.calls[name] ?? 0) + 1;
  const valid = judges.get(name);
  if (!valid || !valid(params?.arguments ?? {})) {
    stats.invalid += 1;
    if (stats.invalidSamples.length < 10) stats.invalidSamples.push(params);
    return false;
  }
  return true;
}

function call(params) {
  if (!judge(params)) {
    return { error: { code: -32602, message: "invalid arguments reached the server" } };
  }
  const args = params.arguments;
  const text = params.name === "echo" ? `echo: ${args.message}` : String(args.a + args.b);
  return { result: { content: [{ type: "text", text }] } };
}

function handle(req, res, body) {
  if (req.method === "GET" && req.url === "/stats") return json(res, 200, { ...stats, open: sessions.size });
  const sid = req.headers["mcp-session-id"];
  if (req.method === "DELETE") {
    sessions.delete(sid);
    return res.writeHead(200).end();
  }
  // No stream for what the server sends unasked: MCP's answer for a server without one.
  if (req.method !== "POST") return res.writeHead(405, { allow: "POST, DELETE" }).end();
  let message;
  try {
    message = JSON.parse(body);
  } catch {
    return json(res, 400, { jsonrpc: "2.0", id: null, error: { code: -32700, message: "parse error" } });
  }
  const meta = message?.params?._meta ?? {};
  const modern = meta["io.modelcontextprotocol/protocolVersion"] === MODERN;
  if (message.method === "initialize") {
    const id = randomUUID();
    sessions.add(id);
    stats.sessions += 1;
    return answerInitialize(res, message, "replica-upstream", id);
  }
  if (!modern && !sessions.has(sid)) {
    stats.unknownSession += 1;
    return json(res, sid ? 404 : 400, {
      jsonrpc: "2.0",
      id: message.id ?? null,
      error: { code: -32001, message: sid ? "session not found" : "no session" },
    });
  }
  if (message.id === undefined) return res.writeHead(202).end();
  let answer;
  if (message.method === "tools/list") answer = { result: { tools } };
  else if (message.method === "tools/call") answer = call(message.params);
  else if (message.method === "ping") answer = { result: {} };
  else answer = { error: { code: -32601, message: `method not found: ${message.method}` } };
  if (modern && answer.result) answer.result.resultType = "complete";
  json(res, 200, { jsonrpc: "2.0", id: message.id, ...answer });
}

const server = createServer((req, res) => {
  const chunks = [];
  req.on("data", (chunk) => chunks.push(chunk));
  req.on("end", () => handle(req, res, Buffer.concat(chunks).toString("utf8")));
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.PORT), "127.0.0.1", () => {
  process.stderr.write(`listening on ${server.address().port}\n`);
});
