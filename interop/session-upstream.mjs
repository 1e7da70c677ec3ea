#!/usr/bin/env node
// A Streamable HTTP MCP server (2025-11-25) on Node's own `http` whose session ids are
// predictable: `s-1`, `s-2`, ... in the order of the `initialize` requests it gets. It keeps
// its sessions as a server must: a request, GET stream or DELETE naming a session it does not
// have is answered 404. For the proxy tests of session limits and ownership.
//
//   PORT=N node session-upstream.mjs [--init-delay-ms MS] [--expire-after-ms MS] [--no-get] [--record FILE]
//
// `--init-delay-ms` holds each `initialize` answer that long after the session exists (a slow
// upstream: concurrent initializes overlap). `--expire-after-ms` ends a session that long after
// the last request it got (recorded as `{"expired": ID}`), as servers expire idle sessions.
// `--no-get` answers every GET 404, as a server with no GET route may, its sessions alive. Tool `whoami` answers with the session the call
// was served in and the `clientInfo.name` its initialize gave. With `--record`, every request
// is recorded as one JSON line: method, session id, status, JSON-RPC method, and the standard
// headers Mcp-Method and Mcp-Name it came with.

import { appendFileSync } from "node:fs";
import { createServer } from "node:http";
import { answerInitialize, json } from "./upstream-wire.mjs";

const option = (name) => {
  const at = process.argv.indexOf(name);
  return at === -1 ? undefined : process.argv[at + 1];
};
const initDelay = Number(option("--init-delay-ms") ?? 0);
const expireAfter = Number(option("--expire-after-ms") ?? 0);
const noGet = process.argv.includes("--no-get");
const recordFile = option("--record");
const sessions = new Map();
let next = 0;

function record(entry) {
  if (recordFile) appendFileSync(recordFile, JSON.stringify(entry) + "\n");
}

// A session's expiry starts again with each request it gets.
function touch(id) {
  const session = sessions.get(id);
  if (!session || expireAfter <= 0) return;
  clearTimeout(session.expiry);
  session.expiry = setTimeout(() => {
    sessions.delete(id);
    record({ expired: id });
  }, expireAfter);
}

const tools = [{ name: "whoami", inputSchema: { type: "object", properties: {} } }];

function handle(req, res, body) {
  const sid = req.headers["mcp-session-id"];
  let message = null;
  try {
    message = body ? JSON.parse(body) : null;
  } catch {
    return json(res, 400, { jsonrpc: "2.0", id: null, error: { code: -32700, message: "parse error" } });
  }
  const method = message?.method;
  if (req.method === "POST" && method === "initialize" && sid === undefined) {
    const id = `s-${++next}`;
    sessions.set(id, { client: message.params?.clientInfo?.name ?? null });
    touch(id);
    record({ http: "POST", method, created: id });
    const answer = () => answerInitialize(res, message, "session-upstream", id);
    return initDelay > 0 ? setTimeout(answer, initDelay) : answer();
  }
  if (noGet && req.method === "GET") {
    record({ http: "GET", session: sid ?? null, status: 404, method: null });
    return json(res, 404, { error: "no GET route" });
  }
  const session = sid === undefined ? undefined : sessions.get(sid);
  if (!session) {
    record({ http: req.method, session: sid ?? null, status: 404, method: method ?? null });
    return json(res, 404, { jsonrpc: "2.0", id: null, error: { code: -32001, message: "Session not found" } });
  }
  touch(sid);
  const standard = {};
  for (const name of ["mcp-method", "mcp-name"]) if (req.headers[name] !== undefined) standard[name] = req.headers[name];
  record({ http: req.method, session: sid, status: 200, method: method ?? null, headers: standard });
  if (req.method === "DELETE") {
    clearTimeout(session.expiry);
    sessions.delete(sid);
    res.writeHead(200);
    return res.end();
  }
  if (req.method === "GET") {
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    res.write(": open\n\n");
    req.on("close", () => res.end());
    return;
  }
  if (!message || message.id === undefined || !method) {
    res.writeHead(202);
    return res.end();
  }
  const { id, params } = message;
  switch (method) {
    case "ping":
      return json(res, 200, { jsonrpc: "2.0", id, result: {} });
    case "tools/list":
      return json(res, 200, { jsonrpc: "2.0", id, result: { tools } });
    case "tools/call":
      if (params?.name === "whoami") {
        const who = { session: sid, client: session.client };
        return json(res, 200, {
          jsonrpc: "2.0",
          id,
          result: { content: [{ type: "text", text: JSON.stringify(who) }] },
        });
      }
      return json(res, 200, { jsonrpc: "2.0", id, error: { code: -32602, message: "unknown tool" } });
    default:
      return json(res, 200, { jsonrpc: "2.0", id, error: { code: -32601, message: `no method ${method}` } });
  }
}

createServer((req, res) => {
  let body = "";
  req.setEncoding("utf8");
  req.on("data", (chunk) => (body += chunk));
  req.on("end", () => handle(req, res, body));
}).listen(Number(process.env.PORT), "127.0.0.1");
