#!/usr/bin/env node
// A Streamable HTTP MCP server (2025-11-25) written on Node's own `http`, for the proxy tests
// that need what an SDK server does not let them choose: event ids, a stream that ends before
// its answer, an event far larger than any limit, a call that never ends. It records every HTTP
// request it gets (method, the headers the tests look at, the JSON-RPC message) and every
// stream its client closed before the end, one JSON line each.
//
//   PORT=N node http-upstream.mjs --record FILE [--pad-listing BYTES]
//
// Tools: `echo` (message: string, required), `resume` (its stream ends after one event with
// id `r-1`; resumed with `Last-Event-ID: r-1`, the answer comes), `big` (one event of 200,000
// bytes), `slow` (never answers), `split` (an event of two `data:` lines that cut a JSON string
// in two: joined, the data is no JSON), `split-body` (a JSON body with a raw line break inside a
// string), `flood` (`count` notifications of `size` bytes each on the call's stream, as fast as
// the client takes them, then the answer; recorded as `flooded`, or `closed` when the client
// went first), `route` (arguments mirrored into `Mcp-Param-*` headers by `x-mcp-header`:
// `region`, `dry`, `target.shard`; every `Mcp-Param-*` header a request brings is recorded);
// with --pad-listing, `echo` has a description of BYTES
// characters, for a tools/list answer (a plain JSON body) as large as a test needs. A GET stream with `Last-Event-ID: g-5` replays one
// notification with id `g-6`.

import { appendFileSync } from "node:fs";
import { createServer } from "node:http";

const recordAt = process.argv.indexOf("--record");
if (recordAt === -1 || !process.argv[recordAt + 1]) {
  process.stderr.write("usage: PORT=N node http-upstream.mjs --record FILE\n");
  process.exit(64);
}
const recordFile = process.argv[recordAt + 1];
const padAt = process.argv.indexOf("--pad-listing");
const pad = padAt === -1 ? 0 : Number(process.argv[padAt + 1]);
const SESSION = "upstream-session-1";
const SEEN_HEADERS = ["authorization", "x-team", "last-event-id", "mcp-session-id", "mcp-protocol-version"];

function record(entry) {
  appendFileSync(recordFile, JSON.stringify(entry) + "\n");
}

const tools = [
  {
    name: "echo",
    ...(pad > 0 ? { description: "x".repeat(pad) } : {}),
    inputSchema: {
      type: "object",
      properties: { message: { type: "string" } },
      required: ["message"],
    },
  },
  { name: "resume", inputSchema: { type: "object", properties: {} } },
  { name: "big", inputSchema: { type: "object", properties: {} } },
  { name: "slow", inputSchema: { type: "object", properties: {} } },
  { name: "split", inputSchema: { type: "object", properties: {} } },
  { name: "split-body", inputSchema: { type: "object", properties: {} } },
  {
    name: "route",
    inputSchema: {
      type: "object",
      properties: {
        region: { type: "string", "x-mcp-header": "Region" },
        dry: { type: "boolean", "x-mcp-header": "Dry" },
        target: { type: "object", properties: { shard: { type: "integer", "x-mcp-header": "Shard" } } },
        note: { type: "string" },
      },
    },
  },
  {
    name: "flood",
    inputSchema: {
      type: "object",
      properties: { count: { type: "integer" }, size: { type: "integer" } },
      required: ["count", "size"],
    },
  },
];

// Write `count` notifications of `size` bytes on `res`, waiting whenever the reader is behind;
// then the answer. Stops when the reader goes away.
async function flood(res, id, count, size) {
  const filler = "x".repeat(size);
  let closed = false;
  res.on("close", () => {
    closed = true;
    if (!res.writableEnded) record({ closed: id });
  });
  for (let n = 0; n < count && !closed; n++) {
    const note = { jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: filler } };
    if (!res.write(`data: ${JSON.stringify(note)}\n\n`)) {
      await new Promise((resolve) => {
        res.once("drain", resolve);
        res.once("close", resolve);
      });
    }
  }
  if (!closed) {
    record({ flooded: id });
    event(res, null, text(id, "flooded"));
    res.end();
  }
}

function json(res, status, body, headers = {}) {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

function events(res) {
  res.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    "mcp-session-id": SESSION,
  });
}

function event(res, id, message) {
  const head = id === null ? "" : `id: ${id}\n`;
  res.write(`${head}data: ${JSON.stringify(message)}\n\n`);
}

const text = (id, value) => ({
  jsonrpc: "2.0",
  id,
  result: { content: [{ type: "text", text: value }] },
});

// The answer the `resume` call owes, kept for the GET that resumes its stream.
let owed = null;

function handle(req, res, body) {
  const headers = {};
  for (const name of SEEN_HEADERS) if (req.headers[name] !== undefined) headers[name] = req.headers[name];
  for (const name of Object.keys(req.headers)) if (name.startsWith("mcp-param-")) headers[name] = req.headers[name];
  let message = null;
  try {
    message = body ? JSON.parse(body) : null;
  } catch {
    message = { unreadable: body.slice(0, 200) };
  }
  record({ http: req.method, headers, message });

  if (req.method === "DELETE") return json(res, 200, {});
  if (req.method === "GET") {
    const last = req.headers["last-event-id"];
    events(res);
    if (last === "r-1" && owed) {
      event(res, "r-2", owed);
      owed = null;
      return res.end();
    }
    if (last === "g-5") {
      event(res, "g-6", { jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "replayed" } });
    }
    req.on("close", () => res.end());
    return;
  }
  if (!message || !message.method || message.id === undefined) {
    res.writeHead(202);
    return res.end();
  }
  const { id, method, params } = message;
  switch (method) {
    case "initialize":
      return json(
        res,
        200,
        {
          jsonrpc: "2.0",
          id,
          result: {
            protocolVersion: "2025-11-25",
            capabilities: { tools: {} },
            serverInfo: { name: "http-upstream", version: "1.0.0" },
          },
        },
        { "mcp-session-id": SESSION },
      );
    case "ping":
      return json(res, 200, { jsonrpc: "2.0", id, result: {} });
    case "tools/list":
      return json(res, 200, { jsonrpc: "2.0", id, result: { tools } });
    case "tools/call":
      break;
    default:
      return json(res, 200, { jsonrpc: "2.0", id, error: { code: -32601, message: `no method ${method}` } });
  }
  switch (params?.name) {
    case "echo":
      return json(res, 200, text(id, `echo: ${params.arguments?.message}`));
    case "route":
      return json(res, 200, text(id, "routed"));
    case "resume":
      // One event with an id, then the stream ends without the answer.
      events(res);
      owed = text(id, "resumed");
      event(res, "r-1", { jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "before the break" } });
      return res.end();
    case "big":
      events(res);
      event(res, "b-1", text(id, "x".repeat(200_000)));
      return res.end();
    case "slow":
      events(res);
      event(res, "s-1", { jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "started" } });
      res.on("close", () => {
        if (!res.writableEnded) record({ closed: id });
      });
      return;
    case "split": {
      // SSE joins the two data lines with "\n": inside the string, where JSON has no raw line break.
      events(res);
      const [head, tail] = JSON.stringify(text(id, "line one\u2028line two")).split("\u2028");
      res.write(`id: sp-1\ndata: ${head}\ndata: ${tail}\n\n`);
      return res.end();
    }
    case "split-body": {
      res.writeHead(200, { "content-type": "application/json" });
      return res.end(JSON.stringify(text(id, "line one\u2028line two")).replace("\u2028", "\n"));
    }
    case "flood":
      events(res);
      flood(res, id, params.arguments?.count ?? 0, params.arguments?.size ?? 0);
      return;
    default:
      return json(res, 200, { jsonrpc: "2.0", id, error: { code: -32602, message: `no tool ${params?.name}` } });
  }
}

const server = createServer((req, res) => {
  let body = "";
  req.setEncoding("utf8");
  req.on("data", (chunk) => (body += chunk));
  req.on("end", () => handle(req, res, body));
});
server.listen(Number(process.env.PORT), "127.0.0.1");
