#!/usr/bin/env bash
# Per-call cost of checking tool-call arguments from Node: toolschema's Node module (the npm
# tarballs of target/dist/, scripts/package.sh, installed into an empty folder) against Ajv
# (compiled once, configured as the MCP TypeScript SDK's default: allErrors, formats) and
# @cfworker/json-schema (the SDK's other validator; shortcircuit off, so it gives every error),
# on the tools of the real catalogs in target/test-data/catalogs, in one run, in one process.
# For each tool: one valid call (its required arguments) and one invalid call (a property of the
# wrong type, or an undeclared argument where the tool is closed), kept only when the three
# validators agree on the verdict. Arguments are JS values (what an SDK hands over): toolschema's
# cost includes writing them as JSON text. Valid calls are timed with the verdict alone; invalid
# calls with the messages. It then prints toolschema's and Ajv's messages side by side for five
# typical mistakes. Nothing is asserted of the figures.
#
#   scripts/bench-node.sh           the packages of target/dist/ (build them first; package.sh's
#                                   default profile is `packaged`); TOOLSCHEMA_NATIVE=FILE.node
#                                   runs the installed package with that module instead
#   scripts/bench-node.sh --smoke   the debug build of the module and the checkout's lib/, tiny
#                                   timing floors (the test command runs this)
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=usage.sh
. scripts/usage.sh
root=$(pwd)
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n1)
for dep in ajv ajv-formats @cfworker/json-schema; do
  [ -d "interop/node_modules/$dep" ] || { echo "interop/node_modules/$dep is missing: (cd interop && npm ci)" >&2; exit 1; }
done
scratch=$(mktemp -d "${TMPDIR:-/tmp}/toolschema-bench-node.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/node_modules/@cfworker"
ln -s "$root/interop/node_modules/ajv" "$root/interop/node_modules/ajv-formats" "$scratch/node_modules/"
ln -s "$root/interop/node_modules/@cfworker/json-schema" "$scratch/node_modules/@cfworker/"
if $smoke; then
  # The module of the debug build (built first when missing), loaded by the checkout's lib/.
  [ -f target/debug/libtoolschema_node.so ] || cargo build --quiet -p toolschema-node
  cp target/debug/libtoolschema_node.so "$scratch/toolschema.node"
  export TOOLSCHEMA_NATIVE=$scratch/toolschema.node
  module=$root/npm/toolschema/lib/index.js
  floor=0.002
  profile="dev (smoke: the figures mean nothing)"
else
  launcher=target/dist/toolschema-$version.tgz
  platform=(target/dist/toolschema-cli-*-"$version".tgz)
  [ -f "$launcher" ] && [ -f "${platform[0]}" ] || { echo "no npm tarballs in target/dist: run scripts/package.sh" >&2; exit 1; }
  echo '{"name": "bench", "version": "1.0.0", "private": true}' >"$scratch/package.json"
  (cd "$scratch" && npm install --offline --no-audit --no-fund --loglevel=error --no-save "$root/$launcher" "$root/${platform[0]}" >/dev/null)
  module=$scratch/node_modules/toolschema/lib/index.js
  floor=${FLOOR:-0.2}
  # TOOLSCHEMA_NATIVE (a toolschema.node of one's own build, say of the packaged profile) wins
  # over the platform package's module, as it does for any user.
  profile="module: ${TOOLSCHEMA_NATIVE:-the platform package of target/dist}"
fi
cat >"$scratch/bench.cjs" <<'JS'
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const [moduleFile, catalogs, floorText, profile] = process.argv.slice(2);
const toolschema = require(moduleFile);
const Ajv = require("ajv").default;
const addFormats = require("ajv-formats").default;
const { Validator: CfValidator } = require("@cfworker/json-schema");
const floor = Number(floorText) * 1e9;

// Ajv as the SDK's default provider makes it (@modelcontextprotocol/sdk validation/ajv-provider).
const ajv = new Ajv({ strict: false, validateFormats: true, validateSchema: false, allErrors: true });
addFormats(ajv);

const SAMPLE = { string: "x", integer: 1, number: 1.5, boolean: true, array: [], object: {}, null: null };
const WRONG = { string: 12345, integer: "twelve", number: "1.5", boolean: "yes", array: { a: 1 }, object: [1] };
const typed = (s) => (s && typeof s.type === "string" ? s.type : null);

function calls(schema) {
  const props = schema.properties || {};
  const valid = {};
  for (const name of schema.required || []) valid[name] = SAMPLE[typed(props[name]) || "string"];
  const wrong = Object.keys(props).find((n) => typed(props[n]) in WRONG);
  const invalid = { ...valid, ...(wrong ? { [wrong]: WRONG[typed(props[wrong])] } : { zz_undeclared: 1 }) };
  return [valid, invalid];
}

// Nanoseconds per call: batches until the floor is spent.
function perCall(f, args) {
  let n = 0;
  let spent = 0;
  while (spent < floor || n === 0) {
    const batch = Math.max(1, n || 100);
    const start = process.hrtime.bigint();
    for (let i = 0; i < batch; i++) f(args);
    spent += Number(process.hrtime.bigint() - start);
    n += batch;
  }
  return spent / n;
}

const rows = [];
for (const file of fs.readdirSync(catalogs).filter((f) => f.endsWith(".json")).sort()) {
  const catalog = toolschema.Catalog.fromJson(fs.readFileSync(path.join(catalogs, file), "utf8"), file);
  for (const name of catalog.names) {
    const schema = catalog.tool(name).inputSchema;
    if (schema.type !== "object") continue;
    let ours, aj, cf;
    try {
      ours = catalog.validator(name);
      aj = ajv.compile(schema);
      cf = new CfValidator(schema, "2020-12", false);
    } catch {
      continue;
    }
    const [valid, invalid] = calls(schema);
    if (!(ours.validate(valid).valid && aj(valid) && cf.validate(valid).valid)) continue;
    if (ours.validate(invalid).valid || aj(invalid) || cf.validate(invalid).valid) continue;
    rows.push([
      `${path.basename(file, ".json")}/${name}`,
      perCall((a) => ours.validate(a).valid, valid),
      perCall((a) => aj(a), valid),
      perCall((a) => cf.validate(a).valid, valid),
      perCall((a) => ours.validate(a).errors.map((e) => e.message), invalid),
      perCall((a) => (aj(a) ? [] : ajv.errorsText(aj.errors)), invalid),
      perCall((a) => cf.validate(a).errors.map((e) => `${e.instanceLocation}: ${e.error}`), invalid),
    ]);
  }
}
if (rows.length < 3) throw new Error(`only ${rows.length} tools were comparable`);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`${rows.length} tools of ${catalogs}; ns per call, median over the tools`);
console.log(`toolschema ${toolschema.version} (${profile}), ajv ${require("ajv/package.json").version}, ` +
  `@cfworker/json-schema ${require("@cfworker/json-schema/package.json").version}, node ${process.version}`);
const labels = ["valid: toolschema", "valid: ajv", "valid: cfworker", "invalid: toolschema", "invalid: ajv (allErrors)", "invalid: cfworker"];
const m = labels.map((label, i) => {
  const value = median(rows.map((r) => r[i + 1]));
  console.log(`  ${label.padEnd(26)} ${value.toFixed(0).padStart(10)}`);
  return value;
});
console.log(`valid calls: toolschema / ajv = ${(m[0] / m[1]).toFixed(2)}x (goal: at most 1.5x); toolschema / cfworker = ${(m[0] / m[2]).toFixed(2)}x`);
console.log(`invalid calls: toolschema / ajv = ${(m[3] / m[4]).toFixed(2)}x (goal: under 1x); toolschema / cfworker = ${(m[3] / m[5]).toFixed(2)}x`);

// Five typical mistakes: what each validator tells the model.
const tools = [{
  name: "search_docs",
  inputSchema: {
    type: "object",
    properties: {
      query: { type: "string", minLength: 3 },
      limit: { type: "integer", minimum: 1, maximum: 50 },
      mode: { enum: ["fast", "exact"] },
    },
    required: ["query"],
    additionalProperties: false,
  },
}];
const mistakes = [
  ["a misspelt argument", { query: "json schema", limt: 5 }],
  ["a required argument left out", { limit: 5 }],
  ["a number as a string", { query: "json schema", limit: "5" }],
  ["an enum value misspelt", { query: "json schema", mode: "fats" }],
  ["a number out of range", { query: "json schema", limit: 500 }],
];
const ours = toolschema.Catalog.fromTools(tools).validator("search_docs");
const aj = ajv.compile(tools[0].inputSchema);
console.log("\nfive typical mistakes: toolschema | ajv (the SDK's default)");
for (const [what, args] of mistakes) {
  const mine = ours.validate(args);
  if (mine.valid || aj(args)) throw new Error(`${what}: not refused by both`);
  console.log(`  ${what}: ${JSON.stringify(args)}`);
  console.log(`    toolschema: ${mine.errors.map((e) => e.message).join("; ")}`);
  console.log(`    ajv:        ${ajv.errorsText(aj.errors)}`);
}
JS
node "$scratch/bench.cjs" "$module" "$root/target/test-data/catalogs" "$floor" "$profile"
