#!/usr/bin/env node
// A real MCP server on the TypeScript SDK for the proxy benchmark: an `echo` tool, and
// optionally many more tools with realistic schemas (to measure the proxy's memory).
//
//   node bench-server.mjs [--tools N]

import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const toolsFlag = process.argv.indexOf("--tools");
const extra = toolsFlag === -1 ? 0 : Number(process.argv[toolsFlag + 1]);

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
await server.connect(new StdioServerTransport());
