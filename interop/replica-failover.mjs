#!/usr/bin/env node
// The replica failover run (scripts/bench-replicas.sh, tests/replicas_failover.rs): one upstream
// (replica-upstream.mjs), three `toolschema proxy --listen --upstream` replicas in front of it,
// HAProxy in front of them (started here with a config written here, checking each replica's
// `/readyz`), and the clients of replica-load.mjs, which kill one replica (SIGKILL) during the
// run. Prints one JSON object: what the clients saw (see replica-load.mjs), what HAProxy saw
// (requests each replica got, and its state at the end), and what reached the upstream (calls,
// and those its schemas refuse: the proxy must let none through).
//
//   node replica-failover.mjs TOOLSCHEMA HAPROXY [--clients N] [--sessions N] [--seconds N]
//     [--kill-at SECONDS] [--check-ms MS] [--timeout-ms MS] [--settle-ms MS] [--config-out FILE]
//     [--proxy-arg ARG]...
//
// Each `--proxy-arg` goes on every replica's command line (`--proxy-arg --input-check
// --proxy-arg warn` lets invalid calls through: the upstream counts them).
//
// HAProxy sends requests without `Mcp-Session-Id` (2026-07-28 requests, and `initialize`)
// round-robin, and hashes those with one on the header, so a session stays on its replica while
// that replica is up; a replica whose `/readyz` fails twice is out until it passes twice.

import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { sleep, start } from "./http-load.mjs";

const [binary, haproxy, ...rest] = process.argv.slice(2);
const option = (name, fallback) => {
  const at = rest.lastIndexOf(name);
  return at === -1 ? fallback : rest[at + 1];
};
if (!binary || !haproxy) {
  process.stderr.write("usage: node replica-failover.mjs TOOLSCHEMA HAPROXY [--clients N] ...\n");
  process.exit(64);
}
const REPLICAS = 3;
// What goes on to replica-load.mjs as it came.
const LOAD_OPTIONS = ["--clients", "--sessions", "--seconds", "--kill-at", "--timeout-ms", "--settle-ms"];
const checkMs = Number(option("--check-ms", 500));
const proxyArgs = rest.flatMap((arg, i) => (rest[i - 1] === "--proxy-arg" && i % 2 === 1 ? [arg] : []));
const here = (name) => fileURLToPath(new URL(name, import.meta.url));

/** A port free now on the loopback. */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** The HAProxy config: `front` for the clients, `stats` for the CSV of what each replica got. */
export function haproxyConfig(front, stats, replicas) {
  const servers = replicas.map((address, i) => `  server replica${i + 1} ${address}`).join("\n");
  return `global
  maxconn 4096

defaults
  mode http
  timeout connect 2s
  timeout client 30s
  timeout server 30s
  # A replica that refuses the connection (it died): try again, on another replica.
  retries 2
  option redispatch 1
  retry-on conn-failure

frontend mcp
  bind 127.0.0.1:${front}
  default_backend replicas

backend replicas
  # Requests with no Mcp-Session-Id (2026-07-28, initialize) go round-robin;
  # a 2025-11-25 session is hashed on its id.
  balance hdr(Mcp-Session-Id)
  hash-type consistent
  # /readyz asks the upstream (initialize, tools/list): under load it may take a while, and
  # one slow answer must not take every replica out at once.
  option httpchk GET /readyz
  http-check expect status 200
  timeout check 2s
  default-server check inter ${checkMs}ms fall 2 rise 2
${servers}

frontend stats
  bind 127.0.0.1:${stats}
  stats enable
  stats uri /stats
`;
}

/** Per replica: the requests HAProxy sent it and its state now. */
async function haproxyStats(port) {
  const csv = await (await fetch(`http://127.0.0.1:${port}/stats;csv`)).text();
  const [header, ...rows] = csv.replace(/^# /, "").trim().split("\n");
  const columns = header.split(",");
  const at = (row, name) => row.split(",")[columns.indexOf(name)];
  const replicas = {};
  for (const row of rows) {
    if (at(row, "pxname") !== "replicas" || !at(row, "svname").startsWith("replica")) continue;
    replicas[at(row, "svname")] = { requests: Number(at(row, "stot")), status: at(row, "status") };
  }
  return replicas;
}

const children = [];
const dir = mkdtempSync(join(tmpdir(), "replica-failover-"));
function cleanup() {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
}
process.on("exit", cleanup);
// Interrupted: the children go too ("exit" handlers do not run on a signal's default action).
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => process.exit(130));

try {
  const upstreamPort = await freePort();
  process.env.PORT = String(upstreamPort);
  const upstream = await start("node", [here("./replica-upstream.mjs")], /listening on/);
  children.push(upstream.child);
  const upstreamUrl = `http://127.0.0.1:${upstreamPort}/mcp`;
  const replicas = [];
  for (let i = 0; i < REPLICAS; i++) {
    const replica = await start(
      binary,
      ["proxy", "--listen", "127.0.0.1:0", "--upstream", upstreamUrl, ...proxyArgs],
      /serving MCP at http:\/\/(\S+)\/mcp\n/,
    );
    children.push(replica.child);
    replicas.push({ child: replica.child, address: replica.match[1] });
  }
  const front = await freePort();
  const statsPort = await freePort();
  const config = haproxyConfig(
    front,
    statsPort,
    replicas.map((r) => r.address),
  );
  const configFile = join(dir, "haproxy.cfg");
  writeFileSync(configFile, config);
  const configOut = option("--config-out");
  if (configOut) writeFileSync(configOut, config);
  // -db: in the foreground, its errors on stderr.
  const balancer = spawn(haproxy, ["-db", "-f", configFile], { stdio: ["ignore", "ignore", "pipe"] });
  children.push(balancer);
  let balancerStderr = "";
  balancer.stderr.on("data", (chunk) => (balancerStderr = (balancerStderr + chunk).slice(-8192)));
  // Ready when every replica passed its checks.
  let up = false;
  for (let waited = 0; waited < 30_000 && !up; waited += 200) {
    if (balancer.exitCode !== null) throw new Error(`haproxy exited (${balancer.exitCode}): ${balancerStderr}`);
    await sleep(200);
    const seen = await haproxyStats(statsPort).catch(() => ({}));
    up = Object.keys(seen).length === REPLICAS && Object.values(seen).every((r) => r.status === "UP");
  }
  if (!up) throw new Error(`the replicas did not all pass HAProxy's checks: ${balancerStderr}`);
  const before = await haproxyStats(statsPort);

  const victim = replicas[1];
  const load = spawn(
    "node",
    [
      here("./replica-load.mjs"),
      `http://127.0.0.1:${front}/mcp`,
      "--kill-pid",
      String(victim.child.pid),
      ...LOAD_OPTIONS.flatMap((name) => (option(name) === undefined ? [] : [name, option(name)])),
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  let loadOut = "";
  load.stdout.on("data", (chunk) => (loadOut += chunk));
  const code = await new Promise((resolve) => load.on("exit", resolve));
  if (code !== 0) throw new Error(`replica-load.mjs exited (${code})`);
  const clients = JSON.parse(loadOut);
  const after = await haproxyStats(statsPort);
  const requests = {};
  for (const [name, r] of Object.entries(after)) requests[name] = r.requests - (before[name]?.requests ?? 0);
  const reached = await (await fetch(`http://127.0.0.1:${upstreamPort}/stats`)).json();
  const report = {
    ...clients,
    checkMs,
    killed: "replica2",
    haproxy: {
      requests,
      status: Object.fromEntries(Object.entries(after).map(([name, r]) => [name, r.status])),
    },
    upstream: reached,
    replicasAlive: replicas.filter((r) => r.child.exitCode === null && r.child.signalCode === null).length,
  };
  process.stdout.write(JSON.stringify(report) + "\n");
} catch (error) {
  process.stderr.write(`replica-failover: ${error?.stack ?? error}\n`);
  process.exitCode = 1;
} finally {
  cleanup();
}
