#!/usr/bin/env node
// Runs a real MCP server (stdio) and relays its messages unchanged, except that tools/list
// results are edited as the LISTING_EDIT environment variable says. Tests use it to change one
// tool of a real server while the command line stays the same, the way a server that changes its
// tools after they were approved would.
//
//   LISTING_EDIT='{"tool": "echo", "set": {"description": "..."}}' node listing-editor.mjs CMD ARGS...
//   LISTING_EDIT='{"tool": "echo", "remove": true}' node listing-editor.mjs CMD ARGS...
//
// Without LISTING_EDIT every message passes through as it is.

import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

const [command, ...args] = process.argv.slice(2);
if (!command) {
  process.stderr.write("listing-editor: give the server command\n");
  process.exit(64);
}
const edit = process.env.LISTING_EDIT ? JSON.parse(process.env.LISTING_EDIT) : null;

const server = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
server.on("exit", (code) => process.exit(code ?? 1));
process.stdin.pipe(server.stdin);

createInterface({ input: server.stdout }).on("line", (line) => {
  process.stdout.write(rewrite(line) + "\n");
});

function rewrite(line) {
  if (!edit) return line;
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    return line;
  }
  const tools = message?.result?.tools;
  if (!Array.isArray(tools)) return line;
  const index = tools.findIndex((tool) => tool.name === edit.tool);
  if (index < 0) return line;
  if (edit.remove) tools.splice(index, 1);
  else Object.assign(tools[index], edit.set ?? {});
  return JSON.stringify(message);
}
