// The book's page on the Node module (docs/src/library/node.md): every ```js block runs, from
// the user's project, in a folder holding a copy of examples/; when a ```text block follows it,
// the block's output is that text (a line `...` stands for any number of lines).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { scratch } from "./common.mjs";

const repo = process.env.TOOLSCHEMA_REPO;
const page = path.join(repo || ".", "docs", "src", "library", "node.md");

function blocks(text) {
  const found = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w+)$/.exec(lines[i]);
    if (!open) continue;
    const start = i + 1;
    let end = start;
    while (lines[end] !== "```") end++;
    found.push({ lang: open[1], line: start, body: lines.slice(start, end).join("\n") + "\n", after: end });
    i = end;
  }
  // The text block right after a js block (blank lines between) is its output.
  return found
    .map((b, k) => {
      const next = found[k + 1];
      const between = next ? lines.slice(b.after + 1, next.line - 1).every((l) => l.trim() === "") : false;
      return { ...b, output: b.lang === "js" && next && next.lang === "text" && between ? next.body : undefined };
    })
    .filter((b) => b.lang === "js");
}

function matches(actual, expected) {
  const want = expected.trimEnd().split("\n");
  const got = actual.trimEnd().split("\n");
  const match = (w, g) => {
    if (w.length === 0) return g.length === 0;
    if (w[0] === "...") return [...Array(g.length + 1).keys()].some((k) => match(w.slice(1), g.slice(k)));
    return g.length > 0 && g[0] === w[0] && match(w.slice(1), g.slice(1));
  };
  return match(want, got);
}

test("every js block of the Node page runs and prints what the page shows", () => {
  assert.ok(repo && fs.existsSync(page), `TOOLSCHEMA_REPO must name the checkout (no ${page})`);
  const found = blocks(fs.readFileSync(page, "utf8"));
  assert.ok(found.length >= 5, `only ${found.length} js blocks`);
  const work = scratch();
  fs.cpSync(path.join(repo, "examples"), path.join(work, "examples"), { recursive: true });
  let compared = 0;
  for (const block of found) {
    // Written into the user's project (where "toolschema" resolves), run from the copy.
    const esm = /^import /m.test(block.body);
    const file = path.join(process.cwd(), "node-tests", `doc-block-${block.line}.${esm ? "mjs" : "cjs"}`);
    fs.writeFileSync(file, block.body);
    const done = spawnSync(process.execPath, [file], { cwd: work, encoding: "utf8", timeout: 60000 });
    assert.equal(done.status, 0, `node.md:${block.line}: ${done.stderr}`);
    if (block.output !== undefined) {
      assert.ok(matches(done.stdout, block.output), `node.md:${block.line} printed:\n${done.stdout}\nthe page shows:\n${block.output}`);
      compared += 1;
    }
  }
  assert.ok(compared >= 4, `only ${compared} outputs compared`);
});
