#!/usr/bin/env node
// An MCP server on the TypeScript SDK's low-level Server (which validates nothing unless told),
// with one planted fault for each check of `toolschema fuzz` and one tool that is correct in
// every way. Apart from its one fault, every tool validates its arguments against its own
// inputSchema (with the SDK's Ajv validator) and answers input errors with a tool error.
//
//   tool           planted fault                                           check
//   divide         exits the process when b is 0                            crash
//   lookup         never answers for a key over its maxLength (before       hang
//                  validating): malformed input a blind fuzzer sends too
//   convert        logs a debug line to stdout before answering            protocol-violation
//   find_user      answers input errors with JSON-RPC error -32602         internal-error
//   set_volume     validates nothing: accepts any arguments                accepted-invalid
//   weather        returns the temperature as a string, not a number      output-schema
//   read_file      puts a stack trace (with its paths) in input errors     leak
//   search         refuses a limit over 50, though its schema allows 100   rejected-valid
//   add_note       none: validates everything, answers as declared         (no finding)
//
//   node faulty-server.mjs                    # stdio
//   node faulty-server.mjs --http PORT        # Streamable HTTP on 127.0.0.1:PORT/mcp (0: any
//                                             # free port); prints "listening on port N" on stderr

import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";

const DRAFT_07 = "http://json-schema.org/draft-07/schema#";
const object = (properties, required, extra = {}) => ({
  $schema: DRAFT_07,
  type: "object",
  properties,
  required,
  additionalProperties: false,
  ...extra,
});

const tools = [
  {
    name: "divide",
    description: "Divides a by b (integer division).",
    inputSchema: object({ a: { type: "integer" }, b: { type: "integer" } }, ["a", "b"]),
  },
  {
    name: "lookup",
    description: "Looks a key up in the cache.",
    inputSchema: object({ key: { type: "string", maxLength: 64 } }, ["key"]),
  },
  {
    name: "convert",
    description: "Converts a distance between kilometres and miles.",
    inputSchema: object(
      {
        value: { type: "number", minimum: 0, maximum: 1000000 },
        from: { enum: ["km", "mi"] },
        to: { enum: ["km", "mi"] },
      },
      ["value", "from", "to"],
    ),
  },
  {
    name: "find_user",
    description: "Finds a user by id.",
    inputSchema: object({ id: { type: "integer", minimum: 1 } }, ["id"]),
  },
  {
    name: "set_volume",
    description: "Sets the speaker volume.",
    inputSchema: object({ level: { type: "integer", minimum: 0, maximum: 10 } }, ["level"]),
  },
  {
    name: "weather",
    description: "The current temperature in a city.",
    inputSchema: object({ city: { type: "string", minLength: 1, maxLength: 100 } }, ["city"]),
    outputSchema: object(
      { temperature: { type: "number" }, unit: { enum: ["celsius", "fahrenheit"] } },
      ["temperature", "unit"],
    ),
  },
  {
    name: "read_file",
    description: "Reads a file of the project by its relative path.",
    inputSchema: object({ path: { type: "string", minLength: 1, maxLength: 200, pattern: "^[a-z0-9_./-]+$" } }, ["path"]),
  },
  {
    name: "search",
    description: "Searches the notes.",
    inputSchema: object(
      {
        query: { type: "string", minLength: 1, maxLength: 200 },
        limit: { type: "integer", minimum: 1, maximum: 100 },
      },
      ["query"],
    ),
  },
  {
    name: "add_note",
    description: "Adds a note and returns it with its id.",
    inputSchema: object(
      {
        title: { type: "string", minLength: 1, maxLength: 80 },
        body: { type: "string", maxLength: 2000 },
        tags: {
          type: "array",
          items: { type: "string", pattern: "^[a-z][a-z0-9-]{0,19}$" },
          maxItems: 5,
          uniqueItems: true,
        },
        priority: { enum: ["low", "normal", "high"] },
        due: { type: "string", format: "date" },
        pinned: { type: "boolean" },
        reminder: object({ minutes: { type: "integer", minimum: 0, maximum: 10080 } }, ["minutes"]),
        data: object({ source: { type: "string", maxLength: 200 } }, ["source"]),
      },
      ["title"],
    ),
    outputSchema: object(
      {
        id: { type: "integer", minimum: 1 },
        title: { type: "string" },
        tags: { type: "array", items: { type: "string" } },
      },
      ["id", "title", "tags"],
    ),
  },
];

const validator = new AjvJsonSchemaValidator();
const checkers = new Map(
  tools.map((tool) => {
    const { $schema, ...schema } = tool.inputSchema;
    return [tool.name, validator.getValidator(schema)];
  }),
);

const text = (t) => ({ content: [{ type: "text", text: t }] });
const toolError = (t) => ({ ...text(t), isError: true });
let nextNote = 1;

// A tool's arguments checked against its inputSchema: the error text, or null when they fit.
function invalid(name, args) {
  const result = checkers.get(name)(args ?? {});
  return result.valid ? null : result.errorMessage;
}

function callTool(name, args) {
  switch (name) {
    case "divide": {
      const why = invalid(name, args);
      if (why) return toolError(`invalid arguments: ${why}`);
      if (args.b === 0) {
        // Fault: the division by zero is thrown where nothing catches it.
        setImmediate(() => {
          throw new RangeError("division by zero");
        });
        return new Promise(() => {});
      }
      return text(String(Math.trunc(args.a / args.b)));
    }
    case "lookup": {
      // Fault: the cache is asked before the arguments are checked, and a key longer than the
      // cache's 64-character keys waits for an entry that never comes.
      if (typeof args?.key === "string" && args.key.length > 64) return new Promise(() => {});
      const why = invalid(name, args);
      if (why) return toolError(`invalid arguments: ${why}`);
      return text(`no entry for ${JSON.stringify(args.key)}`);
    }
    case "convert": {
      const why = invalid(name, args);
      if (why) return toolError(`invalid arguments: ${why}`);
      // Fault: a debugging line on stdout, where only JSON-RPC may go.
      console.log("convert:", args.value, args.from, "->", args.to);
      const factor = args.from === args.to ? 1 : args.from === "km" ? 0.621371 : 1.609344;
      return text(String(args.value * factor));
    }
    case "find_user": {
      const why = invalid(name, args);
      // Fault: input errors as a JSON-RPC error instead of a tool error.
      if (why) throw new McpError(ErrorCode.InvalidParams, `invalid arguments: ${why}`);
      return text(`user ${args.id}: user-${args.id}@example.com`);
    }
    case "set_volume": {
      // Fault: nothing is validated.
      return text(`volume set to ${args?.level}`);
    }
    case "weather": {
      const why = invalid(name, args);
      if (why) return toolError(`invalid arguments: ${why}`);
      // Fault: the temperature is a string; the outputSchema says number.
      const result = { temperature: "21.5", unit: "celsius" };
      return { ...text(JSON.stringify(result)), structuredContent: result };
    }
    case "read_file": {
      const why = invalid(name, args);
      if (why) {
        // Fault: the error carries the stack trace, and with it the server's file paths.
        return toolError(new Error(`invalid arguments: ${why}`).stack);
      }
      return text(`contents of ${args.path}: (empty)`);
    }
    case "search": {
      const why = invalid(name, args);
      if (why) return toolError(`invalid arguments: ${why}`);
      // Fault: the backend takes at most 50, though the schema promises 100.
      if ((args.limit ?? 10) > 50) return toolError("limit must be at most 50");
      return text(`no notes match ${JSON.stringify(args.query)}`);
    }
    case "add_note": {
      // Its errors name each argument by its JSON Pointer, as many servers do
      // ("/data/source must be string"): a pointer into what the caller sent, not a path of this
      // machine, though it may read like one.
      const why = invalid(name, args);
      if (why) {
        const pointers = why.split(", ").map((error) => error.replace(/^data(?=\/| )/, ""));
        return toolError(`invalid arguments: ${pointers.join(", ")}`);
      }
      const note = { id: nextNote++, title: args.title, tags: args.tags ?? [] };
      return { ...text(JSON.stringify(note)), structuredContent: note };
    }
    default:
      throw new McpError(ErrorCode.InvalidParams, `unknown tool: ${name}`);
  }
}

function makeServer() {
  const server = new Server(
    { name: "faulty-server", version: "1.0.0" },
    { capabilities: { tools: {} } },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (request) =>
    callTool(request.params.name, request.params.arguments),
  );
  return server;
}

const httpFlag = process.argv.indexOf("--http");
if (httpFlag === -1) {
  await makeServer().connect(new StdioServerTransport());
} else {
  const sessions = new Map();
  const http = createServer(async (request, response) => {
    if (new URL(request.url, "http://localhost").pathname !== "/mcp") {
      response.writeHead(404).end();
      return;
    }
    const chunks = [];
    for await (const chunk of request) chunks.push(chunk);
    let body;
    try {
      body = chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : undefined;
    } catch {
      response.writeHead(400).end();
      return;
    }
    const id = request.headers["mcp-session-id"];
    let transport = id === undefined ? undefined : sessions.get(id);
    if (transport === undefined) {
      if (id !== undefined) {
        response.writeHead(404).end();
        return;
      }
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sessionId) => sessions.set(sessionId, transport),
      });
      transport.onclose = () => sessions.delete(transport.sessionId);
      await makeServer().connect(transport);
    }
    await transport.handleRequest(request, response, body);
  });
  http.listen(Number(process.argv[httpFlag + 1] ?? 0), "127.0.0.1", () => {
    process.stderr.write(`listening on port ${http.address().port}\n`);
  });
}
