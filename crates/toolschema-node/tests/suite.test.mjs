// The official JSON Schema Test Suite through the Node module agrees with the command: for each
// group, the command judges the instances (`validate --schema --instances`, the suite's remotes as
// `--document`s) and compileSchema(...).validate judges the same values given as JS values;
// verdicts and messages must be the same, and each verdict must be the suite's.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import toolschema from "toolschema";
import { run, scratch, testData } from "./common.mjs";

const suite = path.join(testData(), "json-schema-test-suite");

function remotes() {
  const root = path.join(suite, "remotes");
  const found = {};
  const walk = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith(".json")) {
        found[`http://localhost:1234/${path.relative(root, full).split(path.sep).join("/")}`] = JSON.parse(
          fs.readFileSync(full, "utf8"),
        );
      }
    }
  };
  walk(root);
  return found;
}

function ours(compiled, value) {
  // A string given as the value is its JSON text: a JSON string goes as its text.
  if (typeof value === "string") value = JSON.stringify(value);
  const verdict = compiled.validate(value);
  return {
    valid: verdict.valid,
    messages: verdict.couldNotBeChecked ? verdict.couldNotBeChecked.split("\n") : verdict.errors.map((e) => e.message),
    unchecked: verdict.couldNotBeChecked !== undefined && verdict.couldNotBeChecked !== null,
  };
}

for (const [draft, dialect, least] of [
  ["draft2020-12", "2020-12", 1000],
  ["draft7", "draft-07", 800],
]) {
  test(`the suite (${draft}) agrees with the command`, () => {
    const dir = path.join(suite, "tests", draft);
    const files = fs.readdirSync(dir).filter((f) => f.endsWith(".json")).sort();
    assert.ok(files.length > 0, `no suite in ${dir}: run scripts/test-data.sh`);
    const tmp = scratch();
    const documents = remotes();
    const allDocumentArgs = Object.entries(documents).map(([uri, document], i) => {
      const file = path.join(tmp, `remote-${i}.json`);
      fs.writeFileSync(file, JSON.stringify(document));
      return `--document=${uri}=${file}`;
    });
    let tests = 0;
    const disagreements = [];
    for (const file of files) {
      for (const group of JSON.parse(fs.readFileSync(path.join(dir, file), "utf8"))) {
        const schemaFile = path.join(tmp, "schema.json");
        const instancesFile = path.join(tmp, "instances.jsonl");
        fs.writeFileSync(schemaFile, JSON.stringify(group.schema));
        fs.writeFileSync(instancesFile, group.tests.map((t) => JSON.stringify(t.data) + "\n").join(""));
        // The remotes only for the groups that name them (reading 100 documents per run is
        // most of a run's time); the module gets the same.
        const remote = JSON.stringify(group.schema).includes("localhost:1234");
        const documentArgs = remote ? allDocumentArgs : [];
        const compiled = toolschema.compileSchema(group.schema, { dialect, documents: remote ? documents : undefined });
        const { stdout, stderr } = run([
          "validate", "--dialect", dialect, "--schema", schemaFile, "--instances", instancesFile, ...documentArgs,
        ]);
        const records = stdout.split("\n").filter(Boolean).map((line) => JSON.parse(line));
        assert.equal(records.length, group.tests.length, `${file}: ${stderr}`);
        group.tests.forEach((t, i) => {
          tests += 1;
          const where = `${file} / ${group.description} / ${t.description}`;
          const record = records[i];
          const mine = ours(compiled, t.data);
          const theirs = record.errors.map((e) => e.message);
          if (mine.valid !== record.valid || JSON.stringify(mine.messages) !== JSON.stringify(theirs)) {
            disagreements.push(`${where}: node ${JSON.stringify(mine)}, command ${JSON.stringify(record)}`);
          }
          if (mine.valid !== t.valid) disagreements.push(`${where}: node says valid=${mine.valid}`);
          if (mine.unchecked) disagreements.push(`${where}: could not be checked: ${mine.messages}`);
        });
      }
    }
    console.log(`${draft}: ${tests} tests through Node and the command`);
    assert.ok(tests > least, `only ${tests} tests`);
    assert.deepEqual(disagreements.slice(0, 20), []);
  });
}
