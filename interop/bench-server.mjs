#!/usr/bin/env node
// A real MCP server on the TypeScript SDK for the proxy benchmarks: an `echo` tool, and
// optionally many more tools with realistic schemas (to measure the proxy's memory). Over stdio,
// or over Streamable HTTP at http://127.0.0.1:PORT/mcp (one SDK transport per session).
//
//   node bench-server.mjs [--tools N] [--http PORT [--soak]]
//
// With --soak (the soak of scripts/soak-http.sh), over HTTP: a `flood` tool sends COUNT logging
// notifications of BYTES each, on the call's own stream or (`"stream": "get"`) on the session's
// GET stream; and the server judges every tools/call it receives, as it arrives and before the
// SDK reads it, with Ajv against the inputSchema it declares in tools/list (the SDK reads the
// body the same way: JSON.parse, so a duplicated key is its last value). `GET /stats` answers
// with the counts: calls per tool, and those whose arguments the schema does not accept, with
// the first few of them, and the notifications flooded (a flood whose reader does not take
// its notifications for 10 s ends there).

import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { validatorFor } from "./schema-validator.mjs";

const flag = (name) => {
  const at = process.argv.indexOf(name);
  return at === -1 ? undefined : Number(process.argv[at + 1]);
};
const extra = flag("--tools") ?? 0;
const httpPort = flag("--http");
const soak = process.argv.includes("--soak");
// What the soak's server saw (GET /stats): calls per tool, those its schemas refuse, notifications flooded.
const stats = { calls: {}, invalid: 0, invalidSamples: [], floodNotifications: 0, floodsStalled: 0 };
// The HTTP response each flood writes to, by session and request id (or "GET"): the SDK queues
// what it sends without bound when the reader stops, so the flood waits for the response to drain.
const floodResponses = new Map();
const floodKey = (sessionId, id) => `${sessionId} ${id === undefined ? "GET" : JSON.stringify(id)}`;

/** Resolve once `response` has room, or with false after `ms` without. */
async function drained(response, ms) {
  const until = Date.now() + ms;
  while (response?.writableNeedDrain && !response.destroyed) {
    if (Date.now() > until) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return true;
}

function newServer() {
  const server = new McpServer(
    { name: "bench-server", version: "1.0.0" },
    soak ? { capabilities: { logging: {} } } : undefined,
  );
  server.registerTool(
    "echo",
    { description: "Echoes back the message.", inputSchema: { message: z.string().max(1000) } },
    async ({ message }) => ({ content: [{ type: "text", text: message }] }),
  );
  for (let i = 0; i < extra; i++) {
    server.registerTool(
      `search_${i}`,
      {
        title: `Search collection ${i}`,
        description: `Searches documents in collection ${i} by text, with filters and paging.`,
        inputSchema: {
          query: z.string().min(1).max(200).describe("What to look for"),
          limit: z.number().int().min(1).max(100).optional().describe("How many results"),
          sort: z.enum(["relevance", "newest", "oldest"]).optional(),
          tags: z.array(z.string().max(40)).max(10).optional().describe("Only documents with these tags"),
          since: z.string().optional().describe("ISO date: only documents newer than this"),
        },
        outputSchema: {
          total: z.number().int(),
          items: z.array(z.object({ id: z.string(), title: z.string() })),
        },
      },
      async ({ query }) => {
        const result = { total: 1, items: [{ id: "1", title: query }] };
        return { content: [{ type: "text", text: JSON.stringify(result) }], structuredContent: result };
      },
    );
  }
  if (soak) registerFlood(server);
  return server;
}

/** The soak's `flood` tool: COUNT notifications of BYTES each, yielding between batches. */
function registerFlood(server) {
  server.registerTool(
    "flood",
    {
      description: "Sends COUNT logging notifications of BYTES each, on this call's stream or the GET stream.",
      inputSchema: {
        count: z.number().int().min(1).max(100_000),
        bytes: z.number().int().min(1).max(8_000_000),
        stream: z.enum(["request", "get"]).optional(),
      },
    },
    async ({ count, bytes, stream }, extra) => {
      const data = "x".repeat(bytes);
      const params = { level: "info", logger: "flood", data };
      let sent = 0;
      const key = floodKey(extra.sessionId, stream === "get" ? undefined : extra.requestId);
      try {
        for (; sent < count && !extra.signal.aborted; sent++) {
          if (!(await drained(floodResponses.get(key), 10_000))) {
            stats.floodsStalled += 1;
            break;
          }
          const notification = { method: "notifications/message", params };
          if (stream === "get") await server.server.notification(notification);
          else await extra.sendNotification(notification);
          stats.floodNotifications += 1;
          // Let the event loop serve the other sessions between batches.
          if (sent % 16 === 15) await new Promise((resolve) => setImmediate(resolve));
        }
      } catch {
        // The stream is gone (its reader went away or was cut off): the flood ends there.
      }
      return { content: [{ type: "text", text: `sent ${sent}` }] };
    },
  );
}

/** A function that counts a received message in `stats` if it is a tools/call, judging its
 * arguments against the inputSchema this server declares for the tool. */
async function judge() {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await newServer().connect(serverSide);
  const client = new Client({ name: "bench-server-judge", version: "1.0.0" });
  await client.connect(clientSide);
  const validators = new Map();
  for (const tool of (await client.listTools()).tools) validators.set(tool.name, validatorFor(tool.inputSchema));
  await client.close();
  return (message) => {
    if (message?.method !== "tools/call") return;
    const name = message.params?.name;
    stats.calls[name] = (stats.calls[name] ?? 0) + 1;
    const validate = validators.get(name);
    if (validate && !validate(message.params?.arguments ?? {})) {
      stats.invalid += 1;
      if (stats.invalidSamples.length < 10) stats.invalidSamples.push(message.params);
    }
  };
}

if (httpPort === undefined) {
  await newServer().connect(new StdioServerTransport());
} else {
  const sessions = new Map();
  const see = soak ? await judge() : null;
  const http = createServer(async (request, response) => {
    let body;
    if (see) {
      if (request.url === "/stats") {
        response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(stats));
        return;
      }
      if (request.method === "POST") {
        const chunks = [];
        for await (const chunk of request) chunks.push(chunk);
        try {
          body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
        } catch {
          response.writeHead(400).end();
          return;
        }
        for (const message of Array.isArray(body) ? body : [body]) {
          see(message);
          if (message?.method === "tools/call" && message.params?.name === "flood") {
            const key = floodKey(request.headers["mcp-session-id"], message.id);
            floodResponses.set(key, response);
            response.on("close", () => floodResponses.delete(key));
          }
        }
      } else if (request.method === "GET") {
        const key = floodKey(request.headers["mcp-session-id"]);
        floodResponses.set(key, response);
        response.on("close", () => floodResponses.delete(key));
      }
    }
    const id = request.headers["mcp-session-id"];
    let transport = id ? sessions.get(id) : undefined;
    if (!transport) {
      if (id) {
        response.writeHead(404).end();
        return;
      }
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sessionId) => sessions.set(sessionId, transport),
      });
      transport.onclose = () => sessions.delete(transport.sessionId);
      await newServer().connect(transport);
    }
    await transport.handleRequest(request, response, body);
  });
  http.keepAliveTimeout = 60_000;
  http.listen(httpPort, "127.0.0.1", () => process.stderr.write(`bench-server: listening on ${httpPort}\n`));
}
