// Message cases: the Node module and `toolschema validate --calls` give the same errors (pointer
// and message text, in order) for the same tools and calls, with arguments given as JS values
// and as JSON text (the text keeps big integers exact and lone surrogates as written).
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import toolschema from "toolschema";
import { run, scratch } from "./common.mjs";

const OBJ = { type: "object" };
const obj = (properties, more = {}) => ({ type: "object", properties, ...more });
// Arguments given only as JSON text: what a JS value cannot hold exactly.
const text = (json) => ({ jsonText: json });

// [inputSchema (JSON text or value), arguments]: every keyword a model meets, and values that
// are odd but valid JSON.
const CASES = [
  [obj({ q: { type: "string" } }, { required: ["q"] }), {}],
  [obj({ q: { type: "string" } }, { required: ["q"] }), { q: 1 }],
  [obj({ n: { type: "integer" } }), { n: 1.5 }],
  [obj({ n: { type: "integer" } }), text('{"n": 2.0}')],
  [obj({ n: { type: "number" } }), { n: "1" }],
  [obj({ b: { type: "boolean" } }), { b: "true" }],
  [obj({ a: { type: "array" } }), { a: {} }],
  [obj({ o: { type: "object" } }), { o: [] }],
  [obj({ z: { type: "null" } }), { z: 0 }],
  [obj({ limit: { type: "integer" } }, { additionalProperties: false }), { limt: 5 }],
  [obj({ limit: { type: "integer" } }, { additionalProperties: false }), { limit: 1, x: 2, y: 3 }],
  [obj({ m: { enum: ["fast", "slow"] } }), { m: "fats" }],
  [obj({ c: { const: 3 } }), { c: 4 }],
  [obj({ n: { type: "integer", minimum: 1, maximum: 100 } }), { n: 500 }],
  [obj({ n: { type: "integer", minimum: 1 } }), { n: 0 }],
  [obj({ n: { exclusiveMinimum: 0, exclusiveMaximum: 10 } }), { n: 10 }],
  ['{"type":"object","properties":{"n":{"maximum":18446744073709551615}}}', text('{"n": 18446744073709551616}')],
  ['{"type":"object","properties":{"n":{"maximum":1000000000000000000000000000000}}}', text('{"n": 1000000000000000000000000000001}')],
  ['{"type":"object","properties":{"n":{"minimum":-1000000000000000000000000000000}}}', text('{"n": -1000000000000000000000000000001}')],
  [obj({ n: { multipleOf: 0.1 } }), { n: 0.3 }],
  [obj({ n: { multipleOf: 0.1 } }), { n: 0.35 }],
  [obj({ n: { multipleOf: 3 } }), text('{"n": 9007199254740993}')],
  [obj({ s: { minLength: 3 } }), { s: "ab" }],
  [obj({ s: { maxLength: 2 } }), { s: "\u{1F600}\u{1F600}\u{1F600}" }],
  [obj({ s: { pattern: "^[a-z]+$" } }), { s: "ABC" }],
  [obj({ s: { format: "email" } }), { s: "not an email" }],
  [obj({ a: { minItems: 2 } }), { a: [1] }],
  [obj({ a: { maxItems: 1 } }), { a: [1, 2] }],
  [obj({ a: { uniqueItems: true } }), text('{"a": [1, 1.0]}')],
  [obj({ a: { items: { type: "string" } } }), { a: ["x", 2, null] }],
  [obj({ a: { prefixItems: [{ type: "integer" }], items: false } }), { a: [1, 2] }],
  [obj({ a: { contains: { type: "integer" } } }), { a: ["x"] }],
  [obj({ o: { minProperties: 1 } }), { o: {} }],
  [obj({ o: { propertyNames: { maxLength: 2 } } }), { o: { abc: 1 } }],
  [obj({ a: {}, b: {} }, { dependentRequired: { a: ["b"] } }), { a: 1 }],
  [obj({ v: { oneOf: [{ type: "integer" }, { type: "number" }] } }), { v: 1 }],
  [obj({ v: { anyOf: [{ type: "integer" }, { type: "string" }] } }), { v: null }],
  [obj({ v: { not: { type: "string" } } }), { v: "x" }],
  [obj({ v: { if: { type: "integer" }, then: { minimum: 5 } } }), { v: 1 }],
  [
    obj({ rows: { type: "array", items: obj({ id: { type: "integer" } }, { required: ["id"] }) } }),
    { rows: [{ id: 1 }, {}, { id: "x" }] },
  ],
  [obj({ "a.b": { type: "string" }, "": { type: "string" } }), { "a.b": 1, "": 2 }],
  [{ query: { type: "string", required: true }, limit: { type: "integer", maximum: 100 } }, { limit: 500 }],
  [obj({ u: { type: "string", maxLength: 1 } }), { u: "\ud800\udc00" }],
  [obj({ u: { type: "string", const: "\ud800" } }), { u: "\ud800" }],
  [obj({ u: { type: "string", maxLength: 0 } }), text('{"u": "\\udc00"}')],
  [obj({ t: { type: "string" } }), { t: '\u0000\u001f"\\ \u2028' }],
  [OBJ, []],
  [OBJ, text('"text"')],
  [obj({ f: { type: "number", maximum: 1e308 } }), { f: 1.7976931348623157e308 }],
  [obj({ f: { type: "number", minimum: 0 } }), { f: -5e-324 }],
  [obj({ deep: { type: "array", items: { type: "array", items: { type: "integer" } } } }), { deep: [[1, "x"], [2.5]] }],
];

const schemaText = (schema) => (typeof schema === "string" ? schema : JSON.stringify(schema));
const argsText = (args) => (args && args.jsonText !== undefined ? args.jsonText : JSON.stringify(args));

for (const unknown of ["allow", "reject"]) {
  test(`messages are the command's (--unknown-arguments ${unknown})`, () => {
    const tmp = scratch();
    const catalogText = `{"tools": [${CASES.map(([s], i) => `{"name": "t${i}", "inputSchema": ${schemaText(s)}}`).join(",\n")}]}`;
    fs.writeFileSync(path.join(tmp, "catalog.json"), catalogText);
    fs.writeFileSync(
      path.join(tmp, "calls.jsonl"),
      CASES.map(([, a], i) => `{"name": "t${i}", "arguments": ${argsText(a)}}\n`).join(""),
    );
    const { stdout, stderr } = run([
      "validate", path.join(tmp, "catalog.json"), "--calls", path.join(tmp, "calls.jsonl"), "--unknown-arguments", unknown,
    ]);
    const records = stdout.split("\n").filter(Boolean).map((l) => JSON.parse(l));
    assert.equal(records.length, CASES.length, stderr);
    const catalog = toolschema.Catalog.fromJson(catalogText, "catalog.json");
    let unchecked = 0;
    CASES.forEach(([schema, args], i) => {
      const validator = catalog.validator(`t${i}`, { unknownArguments: unknown });
      const record = records[i];
      const theirs = record.errors.map((e) => [e.path, e.message]);
      const given = args && args.jsonText !== undefined ? args.jsonText : args;
      const verdict = validator.validate(given);
      const mine = verdict.couldNotBeChecked
        ? verdict.couldNotBeChecked.split("\n").map((m) => ["", m])
        : verdict.errors.map((e) => [e.pointer, e.message]);
      assert.deepEqual(mine, theirs, `case ${i}: ${schemaText(schema)} ${argsText(args)}`);
      if (verdict.couldNotBeChecked) {
        unchecked += 1;
        // Never valid: neither the verdict nor isValid says so.
        assert.equal(verdict.valid, false);
        assert.equal(record.valid, false);
        assert.throws(() => validator.isValid(given), /could not be checked/);
      } else {
        assert.equal(verdict.valid, record.valid, `case ${i}`);
        assert.equal(validator.isValid(given), record.valid);
        // The same arguments as JSON text: the same verdict.
        const asText = validator.validate(argsText(args)).errors.map((e) => [e.pointer, e.message]);
        assert.deepEqual(asText, mine, `case ${i} as text`);
      }
    });
    // Some cases are valid and most are not: the comparison is not vacuous.
    const valid = records.filter((r) => r.valid).length;
    assert.ok(valid >= 3 && valid < CASES.length / 2, `${valid} valid`);
    console.log(`--unknown-arguments ${unknown}: ${CASES.length} cases, ${valid} valid, ${unchecked} could not be checked`);
  });
}

test("a path is written as a caller writes it", () => {
  const catalog = toolschema.Catalog.fromTools([{ name: "t", inputSchema: CASES[39][0] }]);
  const errors = catalog.validator("t").validate(CASES[39][1]).errors;
  assert.deepEqual(
    errors.map((e) => [e.path, e.pointer, e.keyword]),
    [
      ["rows[1].id", "/rows/1/id", "required"],
      ["rows[2].id", "/rows/2/id", "type"],
    ],
  );
});
