#!/usr/bin/env node
// An MCP server (stdio, newline-delimited JSON-RPC, no SDK) whose behaviour comes from a script,
// for tests that put the proxy in front of a server that pages, fails, lies, asks the client back
// or dies. It records every line it receives, byte for byte, and judges every tools/call it gets
// against the inputSchema it holds at that moment with Ajv (a validator independent of
// toolschema), so a test can prove that no invalid call ever reached it.
//
//   node scripted-server.mjs --record FILE --verdicts FILE --script JSON
//
// The script (JSON; `@FILE` reads it from a file):
//   tools         the tools it lists (any JSON: odd names, lone surrogates, external $refs);
//                 a tool's `x-result` is what its calls get (`x-result-text`: the result's JSON
//                 text, written as it is, so its numbers stay as stated), and with
//                 `x-second-result` each call is answered a second time, with that
//   next_tools    the tools after a call to `change_tools` (which also sends list_changed)
//   change_on_file  a path: once a file is there, switch to next_tools and send list_changed
//                 (for a test that cannot call the server itself: its only client is the
//                 program under test)
//   page_size     tools per tools/list page (0 or absent: one page)
//   listings      what each tools/list request gets, in order (the last one repeats; default
//                 "ok"): "ok"; "error" (JSON-RPC error -32603); "oversize:BYTES" (the page,
//                 padded to at least BYTES); "ask_roots" (asks the client for roots/list and
//                 answers once the client has answered); "hang" (never answers); "delay:MS";
//                 "exit" (exits with code 4); "number_cursor" (the page, its nextCursor sent as
//                 a number); "cut" and "cut_line" (writes the start of its answer, without or
//                 with a newline, then exits with code 3)
//   protocol      the protocolVersion it answers initialize with (default: the client's)
//   hold_stdout   start a child that keeps stdout open for a minute after the server exits
//
// Built-in tools, whatever the script lists: `crash` exits with code 3, `change_tools` switches
// to next_tools, `slow` answers after `ms` milliseconds. A JSON array is a batch: its messages are
// handled in order and the responses sent back as one array.

import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { spawn } from "node:child_process";
import { onLines, send } from "./stdio-lines.mjs";
import { validatorFor } from "./schema-validator.mjs";

const options = { record: null, verdicts: null, script: {} };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i += 2) {
  const [flag, value] = [argv[i], argv[i + 1]];
  if (flag === "--record") options.record = value;
  else if (flag === "--verdicts") options.verdicts = value;
  else if (flag === "--script") {
    options.script = JSON.parse(value.startsWith("@") ? readFileSync(value.slice(1), "utf8") : value);
  } else {
    process.stderr.write(`scripted-server: unknown option ${flag}\n`);
    process.exit(64);
  }
}
const script = options.script;
let tools = script.tools ?? [];
const listings = script.listings ?? ["ok"];
let listingCount = 0;

if (script.hold_stdout) {
  const holder = spawn("sleep", ["60"], { stdio: ["ignore", "inherit", "ignore"] });
  holder.unref();
  process.stderr.write(`scripted-server: holder ${holder.pid}\n`);
}

if (typeof script.change_on_file === "string") {
  const poll = setInterval(() => {
    if (!existsSync(script.change_on_file)) return;
    clearInterval(poll);
    tools = script.next_tools ?? [];
    send({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
  }, 50);
}

function append(file, line) {
  if (file) appendFileSync(file, line + "\n");
}

// The server's own judgement of a call's arguments: true, false, or null when the schema
// cannot be compiled here either.
function judge(tool, args) {
  try {
    return validatorFor(tool.inputSchema)(args);
  } catch {
    return null;
  }
}

const waiting = new Map(); // id of a request to the client -> resolve
let nextAsk = 0;

function askClient(method) {
  const id = `ask-${++nextAsk}`;
  const answer = new Promise((resolve) => waiting.set(id, resolve));
  send({ jsonrpc: "2.0", id, method });
  return answer;
}

async function listTools(id, params) {
  const behaviour = listings[Math.min(listingCount, listings.length - 1)];
  listingCount += 1;
  const [kind, amount] = behaviour.split(":");
  if (kind === "error") return { jsonrpc: "2.0", id, error: { code: -32603, message: "listing is broken" } };
  if (kind === "hang") return null;
  if (kind === "exit") {
    process.stderr.write("scripted-server: exiting on tools/list\n");
    process.exit(4);
  }
  if (kind === "cut" || kind === "cut_line") {
    // Dies while writing its answer: the line stops inside the tool array.
    const start = `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"tools":[`;
    process.stdout.write(kind === "cut_line" ? start + "\n" : start);
    process.stderr.write("scripted-server: out of memory while listing\n");
    process.exit(3);
  }
  if (kind === "delay") await new Promise((resolve) => setTimeout(resolve, Number(amount)));
  if (kind === "ask_roots") await askClient("roots/list");
  const start = params?.cursor ? Number(params.cursor) : 0;
  const size = script.page_size > 0 ? script.page_size : tools.length;
  const result = { tools: tools.slice(start, start + size) };
  if (start + size < tools.length) {
    result.nextCursor = kind === "number_cursor" ? start + size : String(start + size);
  }
  if (kind === "oversize") result.padding = "p".repeat(Number(amount));
  return { jsonrpc: "2.0", id, result };
}

function text(t) {
  return { content: [{ type: "text", text: t }] };
}

async function callTool(id, params) {
  const args = params?.arguments ?? {};
  switch (params?.name) {
    case "crash":
      process.stderr.write("scripted-server: crash requested\n");
      process.exit(3);
      return null;
    case "change_tools":
      tools = script.next_tools ?? [];
      send({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
      return { jsonrpc: "2.0", id, result: text("tools changed") };
    case "slow":
      await new Promise((resolve) => setTimeout(resolve, args.ms ?? 1000));
      return { jsonrpc: "2.0", id, result: text("slow done") };
    default:
      break;
  }
  const tool = tools.find((t) => t.name === params?.name);
  if (!tool) {
    return { jsonrpc: "2.0", id, error: { code: -32602, message: `Unknown tool: ${params?.name}` } };
  }
  append(options.verdicts, JSON.stringify({ id, tool: tool.name, valid: judge(tool, args) }));
  if (typeof tool["x-result-text"] === "string") {
    // Written as it is: JSON.stringify would round its numbers.
    return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${tool["x-result-text"]}}`;
  }
  const result = tool["x-result"] ?? text(`called ${tool.name}`);
  if (tool["x-second-result"] !== undefined) {
    // A server that answers one call twice.
    setTimeout(() => send({ jsonrpc: "2.0", id, result: tool["x-second-result"] }), 20);
  }
  return { jsonrpc: "2.0", id, result };
}

// The response to one message (a string: its text, written as it is), or null when there is none.
async function handle(message) {
  if (message === null || typeof message !== "object" || Array.isArray(message)) return null;
  const { id, method, params } = message;
  if (method === undefined) {
    if (waiting.has(id)) {
      waiting.get(id)(message);
      waiting.delete(id);
    }
    return null;
  }
  if (id === undefined) return null; // notifications are only recorded
  switch (method) {
    case "initialize":
      return {
        jsonrpc: "2.0",
        id,
        result: {
          protocolVersion: script.protocol ?? params?.protocolVersion ?? "2025-11-25",
          capabilities: { tools: { listChanged: true } },
          serverInfo: { name: "scripted-server", version: "1.0.0" },
        },
      };
    case "ping":
      return { jsonrpc: "2.0", id, result: {} };
    case "tools/list":
      return listTools(id, params);
    case "tools/call":
      return callTool(id, params);
    default:
      return { jsonrpc: "2.0", id, error: { code: -32601, message: `Method not found: ${method}` } };
  }
}

function asText(response) {
  return typeof response === "string" ? response : JSON.stringify(response);
}

async function receive(line) {
  append(options.record, line);
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    return;
  }
  if (Array.isArray(message)) {
    const responses = (await Promise.all(message.map(handle))).filter((r) => r !== null);
    if (responses.length > 0) process.stdout.write(`[${responses.map(asText).join(",")}]\n`);
    return;
  }
  const response = await handle(message);
  if (response !== null) process.stdout.write(asText(response) + "\n");
}

onLines(receive);
