// A TypeScript program using the package's declarations (checked by `tsc --noEmit`, never run).
// The @ts-expect-error lines must be errors: declarations that said `any` would fail the check.
import { Catalog, JSONError, UnknownToolError, adapt, diff, lint, type Verdict } from "toolschema";
import { toolschemaValidator, validateToolCall, validatingCallHandler } from "toolschema/sdk";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";

const catalog: Catalog = Catalog.fromJson('{"tools": []}', "tools.json");
const validator = catalog.validator("search", { unknownArguments: "reject" });
const verdict: Verdict = validator.validate({ query: "x" });
const messages: string[] = verdict.errors.map((e) => `${e.path} ${e.pointer} ${e.keyword} ${e.message}`);
const unchecked: string | undefined = verdict.couldNotBeChecked;
// @ts-expect-error: unknownArguments is "allow" or "reject"
catalog.validator("search", { unknownArguments: "maybe" });
// @ts-expect-error: a verdict has no `ok`
verdict.ok;

try {
  Catalog.fromJson("{");
} catch (e) {
  if (e instanceof JSONError) console.log(e.line + e.column, e.file);
  if (e instanceof UnknownToolError) console.log(e.suggestion ?? e.tool);
}

const findings = lint(catalog, { select: ["ALL"] }).map((d) => `${d.file}:${d.line}:${d.column} ${d.code}`);
const adapted = adapt(catalog, "openai-strict");
const restored: { name: string } = adapted.restore("search", '{"query": "x"}');
const breaking = diff(catalog, catalog).filter((c) => c.class === "breaking");

// The provider fits the SDK's jsonSchemaValidator option.
const client = new Client({ name: "c", version: "1" }, { jsonSchemaValidator: toolschemaValidator() });

// The wrapper fits a low-level Server's tools/call handler.
const server = new Server({ name: "s", version: "1" }, { capabilities: { tools: {} } });
server.setRequestHandler(
  CallToolRequestSchema,
  validatingCallHandler(catalog.tools, async (request): Promise<CallToolResult> => ({
    content: [{ type: "text", text: String(request.params.arguments) }],
  })),
);
const refusal = validateToolCall(catalog, { params: { name: "search", arguments: {} } });
if (refusal) console.log(refusal.content[0].text, refusal.isError);

console.log(messages, unchecked, findings, restored.name, breaking.length, client, server);
