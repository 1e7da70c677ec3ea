// Drives `clap-demo mcp start` (stdio) or `clap-demo mcp stream` (Streamable HTTP) with the
// official TypeScript SDK client: lists the tools, makes the calls given as JSON, and prints one
// JSON document with everything it saw.
//
// usage: node clap-demo-client.mjs stdio|http CLAP_DEMO_BINARY CALLS_JSON_FILE
//
// CALLS_JSON_FILE holds [{"name": ..., "arguments": {...}}, ...]. The server runs in the current
// directory and inherits the environment. For http, the server is started with --port 0, its
// address read from its standard error, and it is stopped with SIGTERM at the end; its exit code
// is part of the output.

import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [mode, binary, callsFile] = process.argv.slice(2);
if (!['stdio', 'http'].includes(mode) || !binary || !callsFile) {
  console.error('usage: node clap-demo-client.mjs stdio|http CLAP_DEMO_BINARY CALLS_JSON_FILE');
  process.exit(2);
}
const calls = JSON.parse(readFileSync(callsFile, 'utf8'));

// Never hang: whatever happens, give up after 60 seconds.
const watchdog = setTimeout(() => {
  console.error('clap-demo-client: timed out');
  process.exit(3);
}, 60_000);

/** Start `clap-demo mcp stream` on a free port; resolve with the process and its URL. */
function startHttpServer() {
  return new Promise((resolve, reject) => {
    const server = spawn(binary, ['mcp', 'stream', '--host', '127.0.0.1', '--port', '0'], {
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
  transport = new StdioClientTransport({ command: binary, args: ['mcp', 'start'], env: process.env });
} else {
  http = await startHttpServer();
  transport = new StreamableHTTPClientTransport(new URL(http.url));
}
await client.connect(transport);

const output = { server: client.getServerVersion(), tools: (await client.listTools()).tools, calls: [] };
for (const call of calls) {
  try {
    const result = await client.callTool({ name: call.name, arguments: call.arguments });
    output.calls.push({ name: call.name, result });
  } catch (error) {
    output.calls.push({ name: call.name, error: { code: error.code, message: error.message } });
  }
}
await client.close();
if (http) {
  output.shutdown = await stopHttpServer(http.server);
}
clearTimeout(watchdog);
process.stdout.write(JSON.stringify(output, null, 2) + '\n');
