#!/usr/bin/env node
// The hostile peers of the HTTP soak (soak-http.mjs), beside the well-behaved sessions, all on
// loopback, each bounded in count and time:
//
//   stalled   connections that send part of a request head (or a whole head and a few bytes of
//             the body it announces, with a valid token) and then nothing, kept up to a target
//             (the proxy's descriptor limit): one the proxy closes is opened again
//   readers   sessions that open their GET stream and call the server's `flood` tool twice (on
//             the call's stream and on the GET stream), then never read a byte of any of them
//   invalid   calls with a valid token whose arguments the tool's listed inputSchema refuses,
//             at a steady rate, in shapes a reader of the body may take differently (a
//             duplicated key, a duplicated `name`, an escaped key, a key in another case, ...)
//   guess     initialize requests with guessed bearer tokens at a steady rate: random ones,
//             one character off a real one, a real one in upper case
//
// After SECONDS every peer stops and one JSON line with what each did and saw goes to stdout;
// the stalled and non-reading connections stay open (silent) until stdin closes, so that what
// the proxy holds then is what it did not time out itself. The process ends by itself at the
// latest HOLD seconds after that.
//
//   node soak-hostile.mjs CONFIG_JSON

import { createConnection } from "node:net";
import { randomBytes } from "node:crypto";
import { validatorFor } from "./schema-validator.mjs";

const config = JSON.parse(process.argv[2]);
const { url, seconds, hold } = config;
const { hostname, port, pathname } = new URL(url);
const host = `${hostname}:${port}`;
const PROTOCOL = "2025-11-25";
const end = Date.now() + seconds * 1000;
const running = () => Date.now() < end;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const harnessErrors = [];
const noteError = (where, error) => {
  if (harnessErrors.length < 20) harnessErrors.push(`${where}: ${error?.message ?? error}`);
};
process.on("uncaughtException", (error) => noteError("uncaught", error));
process.on("unhandledRejection", (error) => noteError("unhandled", error));
// Bounded whatever happens to the driver.
setTimeout(() => process.exit(0), (seconds + hold + 30) * 1000).unref();

const count = (map, key) => (map[key] = (map[key] ?? 0) + 1);

/** A POST of `body` (a string) to the endpoint; status, headers and the JSON-RPC answer. */
async function post(body, headers) {
  const response = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...headers,
    },
    body,
    signal: AbortSignal.timeout(15_000),
  });
  const text = await response.text();
  let message = null;
  if ((response.headers.get("content-type") ?? "").includes("text/event-stream")) {
    // The answer is the event whose message has an id.
    for (const line of text.split("\n")) {
      if (!line.startsWith("data:")) continue;
      try {
        const parsed = JSON.parse(line.slice(5));
        if (parsed.id !== undefined) message = parsed;
      } catch {
        // not one message
      }
    }
  } else {
    try {
      message = JSON.parse(text);
    } catch {
      message = null;
    }
  }
  return { status: response.status, headers: response.headers, message };
}

const initialize = (id) =>
  JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "initialize",
    params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: "soak-hostile", version: "1" } },
  });

/** A session with `token`: its headers for the requests after initialize. */
async function openSession(token) {
  const auth = { authorization: `Bearer ${token}` };
  const init = await post(initialize(0), auth);
  const sessionId = init.headers.get("mcp-session-id");
  if (init.status !== 200 || !sessionId) throw new Error(`initialize answered ${init.status}`);
  const headers = { ...auth, "mcp-session-id": sessionId, "mcp-protocol-version": PROTOCOL };
  await post(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }), headers);
  return headers;
}

/** A connection that has sent `text` (and is left as it is). */
function connectAndSend(text, { connectTimeoutMs = 5_000 } = {}) {
  const socket = createConnection({ host: hostname, port: Number(port) });
  socket.setTimeout(connectTimeoutMs);
  socket.once("connect", () => {
    socket.setTimeout(0);
    socket.write(text);
  });
  return socket;
}

/** The raw head of a request (CRLF line ends, no blank line after it). */
const head = (method, headers) =>
  `${method} ${pathname} HTTP/1.1\r\nHost: ${host}\r\n` +
  Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join("");

// ---- stalled heads and bodies -----------------------------------------------------------------

const stalled = {
  target: config.stalled.target,
  opened: 0,
  connected: 0,
  connectTimeouts: 0,
  errors: {},
  closedByProxy: 0,
  answeredByProxy: {},
  heldNow: 0,
  heldMax: 0,
  live: new Set(),
};

function openStalled() {
  stalled.opened++;
  // One in eight sends a whole head with a valid token and a few bytes of its body.
  const body = stalled.opened % 8 === 0;
  const text = body
    ? head("POST", {
        authorization: `Bearer ${config.stalled.token}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "content-length": "4096",
      }) + '\r\n{"jsonrpc":'
    : head("POST", { "content-type": "application/json" }).slice(0, 40 + (stalled.opened % 20));
  const socket = connectAndSend(text);
  stalled.live.add(socket);
  socket.held = false;
  socket.once("connect", () => {
    socket.held = true;
    stalled.connected++;
    stalled.heldNow++;
    stalled.heldMax = Math.max(stalled.heldMax, stalled.heldNow);
  });
  socket.on("timeout", () => {
    stalled.connectTimeouts++;
    socket.destroy();
  });
  socket.on("data", (chunk) => {
    const status = /^HTTP\/1\.1 (\d+)/.exec(chunk.toString("latin1"));
    if (status) count(stalled.answeredByProxy, status[1]);
  });
  socket.on("error", (error) => count(stalled.errors, error.code ?? error.message));
  socket.on("close", () => {
    stalled.live.delete(socket);
    if (socket.held) {
      stalled.heldNow--;
      if (!stopping) stalled.closedByProxy++;
    }
  });
}

let stopping = false;

async function stalledPeer() {
  const { target, perSecond, maxOpens } = config.stalled;
  if (target <= 0) return;
  const tick = 50;
  while (running() && stalled.opened < maxOpens) {
    let budget = Math.max(1, Math.round((perSecond * tick) / 1000));
    while (budget-- > 0 && stalled.live.size < target && stalled.opened < maxOpens) openStalled();
    await sleep(tick);
  }
}

// ---- clients that stop reading, and the floods sent to them -----------------------------------

const readers = { rounds: 0, sessions: 0, sessionErrors: {}, floodCalls: 0, sockets: [] };

function silent(text) {
  const socket = connectAndSend(text);
  // Never read: no data listener, and paused, so the kernel's buffers fill and then the proxy's.
  socket.pause();
  socket.on("timeout", () => socket.destroy());
  socket.on("error", () => {});
  readers.sockets.push(socket);
  return socket;
}

async function readerRound(round) {
  readers.rounds++;
  let headers;
  try {
    headers = await openSession(config.readers.token);
  } catch (error) {
    count(readers.sessionErrors, error.message);
    return;
  }
  readers.sessions++;
  silent(head("GET", { ...headers, accept: "text/event-stream" }) + "\r\n");
  // Give the GET stream a moment to reach the server before it floods it.
  await sleep(300);
  for (const stream of ["request", "get"]) {
    const body = JSON.stringify({
      jsonrpc: "2.0",
      id: `flood-${round}-${stream}`,
      method: "tools/call",
      params: { name: "flood", arguments: { count: config.readers.count, bytes: config.readers.bytes, stream } },
    });
    silent(
      head("POST", {
        ...headers,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "content-length": String(Buffer.byteLength(body)),
      }) +
        "\r\n" +
        body,
    );
    readers.floodCalls++;
  }
}

async function readerPeer() {
  const { rounds, everySeconds } = config.readers;
  for (let round = 0; round < rounds && running(); round++) {
    await readerRound(round);
    const next = Date.now() + everySeconds * 1000;
    while (running() && Date.now() < next) await sleep(100);
  }
}

// ---- invalid calls with a valid token ---------------------------------------------------------

const invalid = { sent: 0, refused: 0, passed: 0, failed: 0, byCase: {}, skippedCases: [], failures: {} };

/** Raw tools/call bodies (string templates over the id) whose arguments, read the way a
 * JavaScript server reads them, the listed inputSchema refuses. */
function invalidCases(validators) {
  const n = () => Math.floor(Math.random() * 1000);
  const call = (params) => (id) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":${params()}}`;
  const candidates = {
    wrongType: call(() => `{"name":"echo","arguments":{"message":${n()}}}`),
    missing: call(() => `{"name":"echo","arguments":{}}`),
    noArguments: call(() => `{"name":"echo"}`),
    nullArguments: call(() => `{"name":"echo","arguments":null}`),
    arrayArguments: call(() => `{"name":"echo","arguments":["hello"]}`),
    objectMessage: call(() => `{"name":"echo","arguments":{"message":{"text":"hello"}}}`),
    tooLong: call(() => `{"name":"echo","arguments":{"message":"${"x".repeat(1001 + n())}"}}`),
    keyInOtherCase: call(() => `{"name":"echo","arguments":{"Message":"hello"}}`),
    escapedKey: call(() => `{"name":"echo","arguments":{"mess\\u0061ge":${n()}}}`),
    duplicatedKey: call(() => `{"name":"echo","arguments":{"message":"hello","message":${n()}}}`),
    duplicatedArguments: call(() => `{"name":"echo","arguments":{"message":"hello"},"arguments":{"message":${n()}}}`),
    duplicatedName: call(() => `{"name":"flood","arguments":{"count":1,"bytes":1},"name":"echo"}`),
    floodTooMany: call(() => `{"name":"flood","arguments":{"count":${1_000_000 + n()},"bytes":1}}`),
  };
  const cases = {};
  for (const [name, make] of Object.entries(candidates)) {
    const params = JSON.parse(make(1)).params;
    const validate = validators.get(params.name);
    if (validate && !validate(params.arguments ?? {})) cases[name] = make;
    else invalid.skippedCases.push(name);
  }
  return cases;
}

async function invalidPeer() {
  const { perSecond } = config.invalid;
  if (perSecond <= 0) return;
  let headers;
  let validators;
  try {
    headers = await openSession(config.invalid.token);
    const listing = await post(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }), headers);
    validators = new Map();
    for (const tool of listing.message?.result?.tools ?? []) validators.set(tool.name, validatorFor(tool.inputSchema));
  } catch (error) {
    invalid.setupError = error.message;
    return;
  }
  const cases = Object.entries(invalidCases(validators));
  if (cases.length === 0) return;
  const inFlight = new Set();
  for (let i = 0; running(); i++) {
    if (inFlight.size < 16) {
      const [name, make] = cases[i % cases.length];
      const tally = (invalid.byCase[name] ??= { sent: 0, refused: 0, passed: 0, failed: 0 });
      const outcome = (what) => {
        invalid[what]++;
        tally[what]++;
      };
      invalid.sent++;
      tally.sent++;
      const request = post(make(100 + i), headers).then(
        ({ status, message }) => {
          if (status >= 400 && status < 500) outcome("refused");
          else if (status !== 200 || !message) {
            outcome("failed");
            count(invalid.failures, `HTTP ${status}`);
          } else if (message.error || message.result?.isError) outcome("refused");
          else outcome("passed");
        },
        (error) => {
          outcome("failed");
          count(invalid.failures, error.name === "TimeoutError" ? "timeout" : (error.cause?.code ?? error.message));
        },
      );
      inFlight.add(request);
      request.finally(() => inFlight.delete(request));
    }
    await sleep(1000 / perSecond);
  }
  await Promise.allSettled(inFlight);
}

// ---- token guessing ---------------------------------------------------------------------------

const guess = { sent: 0, statuses: {}, accepted: 0, failures: {} };

function guessedToken(i) {
  const real = config.guess.knownToken;
  switch (i % 3) {
    case 0:
      return randomBytes(24).toString("base64url");
    case 1: {
      // One character off a real token.
      const at = i % real.length;
      const other = real[at] === "A" ? "B" : "A";
      return real.slice(0, at) + other + real.slice(at + 1);
    }
    default:
      return real.toUpperCase() === real ? real.toLowerCase() : real.toUpperCase();
  }
}

async function guessPeer() {
  const { perSecond } = config.guess;
  if (perSecond <= 0) return;
  const inFlight = new Set();
  for (let i = 0; running(); i++) {
    if (inFlight.size < 16) {
      guess.sent++;
      const request = post(initialize(i), { authorization: `Bearer ${guessedToken(i)}` }).then(
        ({ status }) => {
          count(guess.statuses, status);
          if (status >= 200 && status < 300) guess.accepted++;
        },
        (error) => count(guess.failures, error.name === "TimeoutError" ? "timeout" : (error.cause?.code ?? error.message)),
      );
      inFlight.add(request);
      request.finally(() => inFlight.delete(request));
    }
    await sleep(1000 / perSecond);
  }
  await Promise.allSettled(inFlight);
}

// ---- run --------------------------------------------------------------------------------------

// The readers and the invalid caller open their sessions before the stalled connections reach
// the descriptor limit: those start after a head start of a few seconds.
const peers = [readerPeer(), invalidPeer(), guessPeer()];
await sleep(Math.min(3_000, seconds * 250));
peers.push(stalledPeer());
await Promise.allSettled(peers);
stopping = true;

const localPort = (socket) => socket.localPort;
const held = [...stalled.live].filter((s) => s.held && !s.destroyed);
const summary = {
  stalled: {
    target: stalled.target,
    opened: stalled.opened,
    connected: stalled.connected,
    connectTimeouts: stalled.connectTimeouts,
    errors: stalled.errors,
    closedByProxy: stalled.closedByProxy,
    answeredByProxy: stalled.answeredByProxy,
    heldMax: stalled.heldMax,
    heldAtEnd: held.length,
    ports: held.map(localPort),
  },
  readers: {
    rounds: readers.rounds,
    sessions: readers.sessions,
    sessionErrors: readers.sessionErrors,
    floodCalls: readers.floodCalls,
    ports: readers.sockets.filter((s) => !s.destroyed && s.localPort).map(localPort),
  },
  invalid,
  guess,
  harnessErrors,
};
process.stdout.write(JSON.stringify(summary) + "\n");

// Hold the silent connections until the driver has taken its last reading.
process.stdin.resume();
process.stdin.on("end", () => process.exit(0));
process.stdin.on("close", () => process.exit(0));
