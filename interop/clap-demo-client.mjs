// Drives `clap-demo mcp start` (stdio) or `clap-demo mcp stream` (Streamable HTTP) with the
// official TypeScript SDK client: lists the tools, makes the calls given as JSON, and prints one
// JSON document with everything it saw.
//
// usage: node clap-demo-client.mjs stdio|http CLAP_DEMO_BINARY CALLS_JSON_FILE [SERVER_ARGS_JSON]
//
// CALLS_JSON_FILE holds [{"name": ..., "arguments": {...}}, ...]; a call may also give
// "timeoutMs" (the client gives up and sends notifications/cancelled after that long) and
// "gone": the first arguments of the command the call runs, to report whether that process was
// seen running during the call and whether it is gone afterwards (killed), from /proc (null where
// there is no /proc); with "closeWhileRunning", the client closes the connection as soon as the
// command runs, and makes no further calls. SERVER_ARGS_JSON is an array of extra arguments for the
// server (like ["--timeout", "2"]). The server runs in the current directory and inherits the
// environment. For http, the server is started with --port 0, its address read from its standard
// error, and it is stopped with SIGTERM at the end; its exit code is part of the output.

import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [mode, binary, callsFile, serverArgsJson] = process.argv.slice(2);
if (!['stdio', 'http'].includes(mode) || !binary || !callsFile) {
  console.error('usage: node clap-demo-client.mjs stdio|http CLAP_DEMO_BINARY CALLS_JSON_FILE');
  process.exit(2);
}
const calls = JSON.parse(readFileSync(callsFile, 'utf8'));
const serverArgs = serverArgsJson ? JSON.parse(serverArgsJson) : [];

// Never hang: whatever happens, give up after 60 seconds.
const watchdog = setTimeout(() => {
  console.error('clap-demo-client: timed out');
  process.exit(3);
}, 60_000);

/** Start `clap-demo mcp stream` on a free port; resolve with the process and its URL. */
function startHttpServer() {
  return new Promise((resolve, reject) => {
    const server = spawn(binary, ['mcp', 'stream', '--host', '127.0.0.1', '--port', '0', ...serverArgs], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    server.stderr.setEncoding('utf8');
    server.stderr.on('data', (chunk) => {
      stderr += chunk;
      // Wait for the whole line: a chunk may end in the middle of the address.
      const match = stderr.match(/serving MCP at (http:\/\/\S+)\n/);
      if (match) resolve({ server, url: match[1], stderr: () => stderr });
    });
    server.on('error', reject);
    server.on('exit', (code) => reject(new Error(`server exited early (${code}): ${stderr}`)));
  });
}

/** Whether a process of the binary runs with these first arguments. */
function running(args) {
  const wanted = [binary, ...args].join('\0') + '\0';
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      if (readlinkSync(`/proc/${pid}/exe`) !== binary) continue;
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').startsWith(wanted)) return true;
    } catch {
      // The process ended while we looked.
    }
  }
  return false;
}

/** Poll up to 10 seconds until `running(args)` is `want`; null without /proc. */
async function until(args, want) {
  if (!existsSync('/proc/self/cmdline')) return null;
  for (let i = 0; i < 200; i++) {
    if (running(args) === want) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}

/** Send SIGTERM and resolve with how the server ended. */
function stopHttpServer(server) {
  return new Promise((resolve) => {
    server.removeAllListeners('exit');
    server.on('exit', (code, signal) => resolve({ code, signal }));
    server.kill('SIGTERM');
  });
}

const client = new Client({ name: 'toolschema-clap-interop', version: '1.0.0' });
let http;
let transport;
if (mode === 'stdio') {
  transport = new StdioClientTransport({ command: binary, args: ['mcp', 'start', ...serverArgs], env: process.env });
} else {
  http = await startHttpServer();
  transport = new StreamableHTTPClientTransport(new URL(http.url));
}
await client.connect(transport);

const output = { server: client.getServerVersion(), tools: (await client.listTools()).tools, calls: [] };
for (const call of calls) {
  const options = call.timeoutMs ? { timeout: call.timeoutMs } : undefined;
  const settled = client
    .callTool({ name: call.name, arguments: call.arguments }, undefined, options)
    .then(
      (result) => ({ name: call.name, result }),
      (error) => ({ name: call.name, error: { code: error.code, message: error.message } }),
    );
  const wasRunning = call.gone ? await until(call.gone, true) : undefined;
  if (call.closeWhileRunning) {
    await client.close();
  }
  const seen = await settled;
  if (call.gone) {
    seen.wasRunning = wasRunning;
    seen.gone = await until(call.gone, false);
  }
  output.calls.push(seen);
  if (call.closeWhileRunning) break;
}
await client.close();
if (http) {
  output.shutdown = await stopHttpServer(http.server);
}
clearTimeout(watchdog);
process.stdout.write(JSON.stringify(output, null, 2) + '\n');
