// The Node module's API as a user calls it: typed errors, hostile values, and lint, fix, adapt
// (with restore) and diff printing what the command prints for the same files.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import toolschema from "toolschema";
import { installedAt, run, scratch } from "./common.mjs";

const catalogText = JSON.stringify(
  {
    tools: [
      {
        name: "search_docs",
        description: "Search the docs.",
        inputSchema: {
          type: "object",
          properties: {
            query: { type: "string", minLength: 3, maxLength: 200 },
            limit: { type: "integer", minimum: 1, maximum: 50 },
          },
          required: ["query"],
          additionalProperties: false,
        },
      },
      {
        name: "create_ticket",
        description: "Open a ticket.",
        inputSchema: { title: { type: "string", required: true }, priority: { type: "string", enum: ["low", "high"] } },
      },
    ],
  },
  null,
  2,
);

function files() {
  const dir = scratch();
  fs.writeFileSync(path.join(dir, "catalog.json"), catalogText);
  return dir;
}

test("the package is the installed one, with its native module", () => {
  const main = installedAt("toolschema");
  assert.match(main, /node_modules[\\/]toolschema[\\/]lib[\\/]index\.js$/);
  assert.equal(toolschema.version, JSON.parse(fs.readFileSync(installedAt("toolschema/package.json"), "utf8")).version);
});

test("Catalog.fromJson reads every shape the command reads", () => {
  const tools = JSON.parse(catalogText).tools;
  const shapes = {
    "a tools/list result": catalogText,
    "a JSON-RPC response": JSON.stringify({ jsonrpc: "2.0", id: 1, result: { tools } }),
    "a bare list": JSON.stringify(tools),
    "one tool": JSON.stringify(tools[0]),
    "a Buffer": Buffer.from(catalogText),
  };
  for (const [what, text] of Object.entries(shapes)) {
    const catalog = toolschema.Catalog.fromJson(text);
    assert.ok(catalog.names.includes("search_docs"), what);
  }
  const catalog = toolschema.Catalog.fromJson(catalogText, "catalog.json");
  assert.deepEqual(catalog.names, ["search_docs", "create_ticket"]);
  assert.equal(catalog.tools.length, 2);
  assert.equal(catalog.tool("search_docs").description, "Search the docs.");
  assert.equal(catalog.file, "catalog.json");
});

test("text that is not JSON throws JSONError with the command's line and column", () => {
  const dir = files();
  const bad = '{"tools": [\n  {"name": "x",}\n]}';
  fs.writeFileSync(path.join(dir, "bad.json"), bad);
  const cli = run(["validate", "bad.json", "--tool", "x", "--args", "{}"], { cwd: dir });
  assert.equal(cli.code, 2);
  assert.throws(
    () => toolschema.Catalog.fromJson(bad, "bad.json"),
    (e) => {
      assert.ok(e instanceof toolschema.JSONError && e instanceof toolschema.ToolschemaError && e instanceof Error);
      assert.equal(e.name, "JSONError");
      assert.deepEqual([e.file, e.line, e.column], ["bad.json", 2, 16]);
      assert.ok(cli.stderr.includes(e.message), `${cli.stderr} lacks ${e.message}`);
      return true;
    },
  );
  assert.throws(() => toolschema.Catalog.fromJson(Buffer.from([0x7b, 0xff])), toolschema.NotJSONError);
  assert.throws(() => toolschema.Catalog.fromJson('{"nope": 1}'), toolschema.CatalogError);
  assert.throws(() => toolschema.Catalog.fromJson({ tools: [] }), toolschema.UsageError);
});

test("an unknown tool throws UnknownToolError with the command's did-you-mean", () => {
  const dir = files();
  const cli = run(["validate", "catalog.json", "--tool", "serch_docs", "--args", "{}"], { cwd: dir });
  const catalog = toolschema.Catalog.fromJson(catalogText, "catalog.json");
  assert.throws(
    () => catalog.validator("serch_docs"),
    (e) => {
      assert.ok(e instanceof toolschema.UnknownToolError);
      assert.equal(e.name, "UnknownToolError");
      assert.equal(e.tool, "serch_docs");
      assert.equal(e.suggestion, "search_docs");
      assert.ok(cli.stderr.includes(e.message), `${cli.stderr} lacks ${e.message}`);
      return true;
    },
  );
});

test("a bad schema and a remote $ref throw SchemaError; nothing is fetched", () => {
  const remote = toolschema.Catalog.fromTools([
    { name: "t", inputSchema: { type: "object", properties: { a: { $ref: "https://example.com/a.json" } } } },
  ]);
  assert.throws(() => remote.validator("t"), (e) => e instanceof toolschema.SchemaError && /example\.com/.test(e.message));
  assert.throws(() => toolschema.compileSchema({ $ref: "https://example.com/a.json" }), toolschema.SchemaError);
  assert.throws(() => toolschema.compileSchema({ type: "strnig" }), toolschema.SchemaError);
  assert.throws(() => toolschema.compileSchema({ type: "string", pattern: "(" }), toolschema.SchemaError);
  // The same remote document given as a document: compiled, and it checks.
  const local = toolschema.compileSchema(
    { $ref: "https://example.com/a.json" },
    { documents: { "https://example.com/a.json": { type: "integer" } } },
  );
  assert.equal(local.validate(1).valid, true);
  // A string is JSON text (as arguments are given): the JSON string "x" is '"x"'.
  assert.equal(local.validate('"x"').errors[0].message, "value must be an integer (got a string)");
});

test("big integers as JSON text stay exact", () => {
  const catalog = toolschema.Catalog.fromJson(
    '[{"name": "t", "inputSchema": {"type": "object", "properties": {"n": {"maximum": 9007199254740993}}}}]',
  );
  const v = catalog.validator("t");
  assert.equal(v.validate('{"n": 9007199254740993}').valid, true);
  const over = v.validate('{"n": 9007199254740994}');
  assert.equal(over.valid, false);
  assert.match(over.errors[0].message, /9007199254740993/);
  // A JS number cannot hold it: 9007199254740994 as a JS value is already ...994.
  assert.equal(v.validate({ n: 9007199254740994 }).valid, false);
});

test("a value with no JSON form throws NotJSONError, never a verdict", () => {
  const v = toolschema.Catalog.fromJson(catalogText).validator("search_docs");
  const cyclic = { query: "abc" };
  cyclic.self = cyclic;
  assert.throws(() => v.validate(cyclic), toolschema.NotJSONError);
  assert.throws(() => v.validate({ query: 1n }), toolschema.NotJSONError);
  assert.throws(() => v.validate(() => 1), toolschema.NotJSONError);
  // Absent arguments are {} (MCP's rule); a lone surrogate is kept as written.
  assert.equal(v.validate(undefined).errors[0].keyword, "required");
  assert.equal(v.validate({ query: "ab\ud800" }).valid, true);
});

// A 100,000-deep value, given as a JS value and as JSON text, in a child process: it must end
// with a typed error (no crash, no hang) well within the time limit.
test("a 100k-deep value neither crashes nor hangs", () => {
  const script = `
    const toolschema = require("toolschema");
    const v = toolschema.Catalog.fromJson('[{"name": "t", "inputSchema": {"type": "object"}}]').validator("t");
    const schema = toolschema.compileSchema({ items: { items: {} } });
    let deep = []; let cur = deep;
    for (let i = 0; i < 100000; i++) { const next = []; cur.push(next); cur = next; }
    const text = "[".repeat(100000) + "]".repeat(100000);
    const out = [];
    for (const [what, f] of [
      ["value", () => v.validate({ a: deep })],
      ["text", () => v.validate('{"a": ' + text + "}")],
      ["schema value", () => schema.validate(deep)],
      ["catalog", () => toolschema.Catalog.fromJson('[{"name": "t", "inputSchema": ' + text + '}]')],
    ]) {
      try { f(); out.push(what + ": no error"); } catch (e) { out.push(what + ": " + e.name + ": " + e.message.slice(0, 120)); }
    }
    console.log(JSON.stringify(out));
  `;
  const done = spawnSync(process.execPath, ["-e", script], { encoding: "utf8", timeout: 120000, cwd: process.cwd() });
  assert.equal(done.signal, null, `killed by ${done.signal}: ${done.stderr}`);
  assert.equal(done.status, 0, done.stderr);
  const out = JSON.parse(done.stdout);
  assert.match(out[0], /^value: NotJSONError: arguments: /);
  assert.match(out[1], /^text: JSONError: arguments:1:\d+: invalid JSON: JSON nests deeper than 128 levels/);
  assert.match(out[2], /^schema value: NotJSONError: value: /);
  assert.match(out[3], /^catalog: JSONError: <input>:1:\d+: invalid JSON: JSON nests deeper than 128 levels/);
});

test("validateOutput checks structuredContent as the command does", () => {
  const catalog = toolschema.Catalog.fromTools([
    {
      name: "sum",
      inputSchema: { type: "object" },
      outputSchema: { type: "object", properties: { total: { type: "integer" } }, required: ["total"] },
    },
  ]);
  const v = catalog.validator("sum");
  assert.equal(v.validateOutput({ total: 3 }).valid, true);
  const bad = v.validateOutput({ total: "3" });
  assert.deepEqual(
    bad.errors.map((e) => [e.path, e.keyword]),
    [["total", "type"]],
  );
  assert.match(bad.errors[0].message, /field 'total'/);
  assert.equal(v.validateOutput(undefined).valid, false);
  assert.equal(v.validateOutput({ total: "3" }, { isError: true }).valid, true);
});

test("lint gives the command's findings", () => {
  const dir = files();
  const cli = JSON.parse(run(["lint", "catalog.json", "--format", "json", "--select", "ALL"], { cwd: dir }).stdout);
  const mine = toolschema.lint(toolschema.Catalog.fromJson(catalogText, "catalog.json"), { select: ["ALL"] });
  assert.ok(mine.length >= 2);
  assert.deepEqual(
    mine.map((d) => [d.code, d.severity, d.line, d.column, d.message, d.tool ?? null, d.fix ?? null]),
    cli.diagnostics.map((d) => [d.code, d.severity, d.line, d.column, d.message, d.tool ?? null, d.fix ?? null]),
  );
  assert.throws(() => toolschema.lint(catalogText, { select: ["NOPE-999"] }), toolschema.UsageError);
});

test("fix gives the command's fixed text", () => {
  const dir = files();
  const cli = run(["lint", "catalog.json", "--fix"], { cwd: dir });
  assert.equal(toolschema.fix(catalogText, { file: "catalog.json" }), cli.stdout);
  assert.notEqual(cli.stdout, catalogText);
});

test("adapt and restore give the command's output", () => {
  const dir = files();
  const cli = JSON.parse(run(["adapt", "--to", "openai-strict", "catalog.json"], { cwd: dir }).stdout);
  const adapted = toolschema.adapt(toolschema.Catalog.fromJson(catalogText, "catalog.json"), "openai-strict");
  assert.deepEqual(adapted.toJSON(), cli);
  assert.deepEqual(adapted.tools, cli.tools);
  const args = '{"query": "abc", "limit": null}';
  const restored = run(["adapt", "--to", "openai-strict", "catalog.json", "--restore", "search_docs", "--args", args], { cwd: dir });
  assert.deepEqual(adapted.restore("search_docs", args), JSON.parse(restored.stdout));
  assert.deepEqual(adapted.restore("search_docs", { query: "abc", limit: null }), { name: "search_docs", arguments: { query: "abc" } });
  const bad = run(["adapt", "--to", "openai-strict", "catalog.json", "--restore", "search_docs", "--args", '{"query": "a", "limit": null}'], { cwd: dir });
  assert.notEqual(bad.code, 0);
  assert.throws(
    () => adapted.restore("search_docs", { query: "a", limit: null }),
    (e) => {
      assert.ok(e instanceof toolschema.InvalidArgumentsError);
      assert.deepEqual(e.errors.map((x) => x.keyword), ["minLength"]);
      assert.ok(bad.stderr.includes(e.errors[0].message), bad.stderr);
      return true;
    },
  );
  assert.throws(() => adapted.restore("nope", {}), toolschema.UnknownToolError);
  assert.throws(() => toolschema.adapt(catalogText, "nobody"), toolschema.UsageError);
});

test("diff gives the command's changes", () => {
  const dir = files();
  const next = JSON.parse(catalogText);
  next.tools[0].inputSchema.properties.query.maxLength = 100;
  next.tools[0].inputSchema.required.push("limit");
  next.tools.pop();
  const nextText = JSON.stringify(next, null, 2);
  fs.writeFileSync(path.join(dir, "next.json"), nextText);
  const cli = JSON.parse(run(["diff", "catalog.json", "next.json", "--format", "json"], { cwd: dir }).stdout);
  const mine = toolschema.diff(catalogText, nextText);
  assert.deepEqual(mine, cli.changes);
  assert.ok(mine.some((c) => c.class === "breaking"));
  assert.deepEqual(toolschema.diff(catalogText, catalogText), []);
});
