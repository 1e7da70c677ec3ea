// Prints the tools/list result of an MCP server started over stdio, every page followed, as
// {"tools": [...]} (two-space indented), using the official TypeScript SDK client:
//   node list-tools.mjs COMMAND [ARGS...]
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [command, ...args] = process.argv.slice(2);
if (!command) {
  console.error("usage: node list-tools.mjs COMMAND [ARGS...]");
  process.exit(2);
}
const transport = new StdioClientTransport({ command, args, stderr: "ignore" });
const client = new Client({ name: "toolschema-interop", version: "0.1.0" });
await client.connect(transport);
const tools = [];
let cursor;
do {
  const page = await client.listTools(cursor ? { cursor } : {});
  tools.push(...page.tools);
  cursor = page.nextCursor;
} while (cursor);
process.stdout.write(JSON.stringify({ tools }, null, 2) + "\n");
await client.close();
