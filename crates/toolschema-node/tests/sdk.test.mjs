// toolschema with the real MCP TypeScript SDK: a Client with the toolschema provider, and a
// low-level Server with the wrapper, each driven over stdio by the SDK's own client.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import toolschema from "toolschema";
import { toolschemaValidator, validateToolCall } from "toolschema/sdk";
import { run, scratch } from "./common.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));

async function connect(fixture, options = {}, env = {}) {
  const client = new Client({ name: "toolschema-test", version: "1.0.0" }, options);
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [path.join(here, "fixtures", fixture)],
    env: { ...process.env, ...env },
    stderr: "inherit",
  });
  await client.connect(transport);
  return client;
}

test("a Client with the toolschema provider refuses structured output that breaks its outputSchema, with toolschema's message", async () => {
  const client = await connect("output-server.mjs", { jsonSchemaValidator: toolschemaValidator() });
  try {
    const { tools } = await client.listTools();
    const sum = tools.find((t) => t.name === "sum");
    const good = await client.callTool({ name: "sum", arguments: { a: 1, b: 2 } });
    assert.deepEqual(good.structuredContent, { total: 3, unit: "items" });
    // What toolschema says of that content, and what the command says of it.
    const lie = { total: "3", unti: "items" };
    const expected = toolschema.validateValue(sum.outputSchema, lie).errors.map((e) => e.message);
    const dir = scratch();
    fs.writeFileSync(path.join(dir, "schema.json"), JSON.stringify(sum.outputSchema));
    fs.writeFileSync(path.join(dir, "content.jsonl"), JSON.stringify(lie) + "\n");
    const cli = run(["validate", "--schema", "schema.json", "--instances", "content.jsonl"], { cwd: dir });
    assert.deepEqual(JSON.parse(cli.stdout).errors.map((e) => e.message), expected);
    assert.ok(expected.some((m) => /unexpected value 'unti' \(did you mean 'unit'\?\)/.test(m)), expected.join("\n"));
    await assert.rejects(client.callTool({ name: "sum", arguments: { a: 1, b: 2, lie: true } }), (e) => {
      assert.equal(e.message, `MCP error -32602: Structured content does not match the tool's output schema: ${expected.join("\n")}`);
      return true;
    });
  } finally {
    await client.close();
  }
  // The SDK's default (Ajv) says it otherwise: the provider above was the one in use.
  const plain = await connect("output-server.mjs");
  try {
    await plain.listTools();
    await assert.rejects(plain.callTool({ name: "sum", arguments: { a: 1, b: 2, lie: true } }), (e) => {
      assert.doesNotMatch(e.message, /did you mean/);
      return true;
    });
  } finally {
    await plain.close();
  }
});

test("the provider fails closed: a schema it cannot compile refuses every value, with why", () => {
  const check = toolschemaValidator().getValidator({ $ref: "https://example.com/schema.json" });
  const verdict = check({});
  assert.equal(verdict.valid, false);
  assert.match(verdict.errorMessage, /example\.com/);
  const big = toolschemaValidator().getValidator({ type: "object" });
  assert.equal(big({ n: 1n }).valid, false);
  assert.deepEqual(big({ n: 1 }), { valid: true, data: { n: 1 }, errorMessage: undefined });
});

test("a low-level Server wrapped by validatingCallHandler never runs its handler for an invalid call", async () => {
  const dir = scratch();
  const record = path.join(dir, "calls.jsonl");
  fs.writeFileSync(record, "");
  const client = await connect("guarded-server.mjs", {}, { RECORD: record });
  try {
    const { tools } = await client.listTools();
    fs.writeFileSync(path.join(dir, "tools.json"), JSON.stringify({ tools }));
    const invalid = [
      { query: "x", limt: 5 },
      { limit: 500 },
      { query: "json schema", limit: 1.5 },
    ];
    for (const args of invalid) {
      const result = await client.callTool({ name: "search_docs", arguments: args });
      assert.equal(result.isError, true, JSON.stringify(result));
      // The command's messages for the same call, one per line.
      const cli = run(["validate", "tools.json", "--tool", "search_docs", "--args", JSON.stringify(args)], { cwd: dir });
      assert.equal(cli.code, 1);
      const lines = result.content[0].text.split("\n");
      assert.ok(lines.length >= 1);
      for (const line of lines) assert.ok(cli.stdout.includes(line) || cli.stderr.includes(line), `${line} not in ${cli.stdout}${cli.stderr}`);
    }
    const unknown = await client.callTool({ name: "serch_docs", arguments: { query: "abc" } });
    assert.equal(unknown.isError, true);
    assert.match(unknown.content[0].text, /did you mean 'search_docs'/);
    const ok = await client.callTool({ name: "search_docs", arguments: { query: "json schema", limit: 5 } });
    assert.equal(ok.isError, undefined);
    assert.equal(ok.content[0].text, "searched json schema");
  } finally {
    await client.close();
  }
  const ran = fs.readFileSync(record, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
  assert.deepEqual(ran, [{ name: "search_docs", arguments: { query: "json schema", limit: 5 } }]);
});

test("validateToolCall answers with isError and toolschema's messages, or undefined", () => {
  const tools = [{ name: "t", inputSchema: { type: "object", properties: { n: { type: "integer" } }, required: ["n"] } }];
  assert.equal(validateToolCall(tools, { method: "tools/call", params: { name: "t", arguments: { n: 1 } } }), undefined);
  // Arguments are the request's JS value: a string is a string (refused), never JSON text.
  assert.equal(validateToolCall(tools, { name: "t", arguments: '{"n": 1}' }).isError, true);
  assert.equal(toolschemaValidator().getValidator({ type: "object" })('{"n": 1}').valid, false);
  const refused = validateToolCall(tools, { params: { name: "t" } });
  assert.deepEqual(refused, { content: [{ type: "text", text: "missing required argument 'n'" }], isError: true });
  assert.equal(validateToolCall(tools, { params: {} }).isError, true);
});
