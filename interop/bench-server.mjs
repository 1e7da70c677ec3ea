#!/usr/bin/env node
// A real MCP server on the TypeScript SDK for the proxy benchmarks: an `echo` tool, and
// optionally many more tools with realistic schemas (to measure the proxy's memory). Over stdio,
// or over Streamable HTTP at http://127.0.0.1:PORT/mcp (one SDK transport per session).
//
//   node bench-server.mjs [--tools N] [--http PORT]

import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";

const flag = (name) => {
  const at = process.argv.indexOf(name);
  return at === -1 ? undefined : Number(process.argv[at + 1]);
};
const extra = flag("--tools") ?? 0;
const httpPort = flag("--http");

function newServer() {
  const server = new McpServer({ name: "bench-server", version: "1.0.0" });
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
  return server;
}

if (httpPort === undefined) {
  await newServer().connect(new StdioServerTransport());
} else {
  const sessions = new Map();
  const http = createServer(async (request, response) => {
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
    await transport.handleRequest(request, response);
  });
  http.keepAliveTimeout = 60_000;
  http.listen(httpPort, "127.0.0.1", () => process.stderr.write(`bench-server: listening on ${httpPort}\n`));
}
