// Drives an HTTP server of the project behind its guard (`clap-demo mcp stream`, or `toolschema
// proxy --listen` in front of the recording server) with the official TypeScript SDK client and
// with plain HTTP requests, and prints one JSON document with everything it saw.
//
// usage: node http-auth.mjs CLAP_DEMO_BINARY
//        node http-auth.mjs --proxy TOOLSCHEMA_BINARY -- SERVER_COMMAND ARGS...
//
// Runs in the current directory, where it writes `tokens` (the token file), `jwks.json` (unused
// by the server, kept for inspection), for the proxy a `toolschema.toml` (the scopes its tools
// need), and where the server writes `access.jsonl` (and the proxy `audit.jsonl`). It generates
// an RSA and a P-256 key pair, serves them as an OAuth issuer on loopback (RFC 8414 metadata and
// a JWK Set), signs the JWTs itself (RS256 and ES256), and starts the server with
// --auth-token-file, --oauth-issuer and --oauth-audience. Every secret it made is listed in the
// output's "secrets", so that the caller can check none of them reached a log.

import { spawn } from 'node:child_process';
import { generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const argv = process.argv.slice(2);
const proxy = argv[0] === '--proxy';
const binary = proxy ? argv[1] : argv[0];
const serverCommand = proxy ? argv.slice(argv.indexOf('--') + 1) : [];
if (!binary || (proxy && serverCommand.length === 0)) {
  console.error('usage: node http-auth.mjs CLAP_DEMO_BINARY | --proxy TOOLSCHEMA_BINARY -- SERVER...');
  process.exit(2);
}
const watchdog = setTimeout(() => {
  console.error('http-auth: timed out');
  process.exit(3);
}, 120_000);

const AUDIENCE = proxy ? 'https://proxy.example/mcp' : 'https://clap-demo.example/mcp';
const secrets = [];
const secret = (value) => {
  secrets.push(value);
  return value;
};
const tokens = {
  alice: secret(randomBytes(24).toString('base64url')),
  bob: secret(randomBytes(24).toString('base64url')),
  carol: secret(randomBytes(24).toString('base64url')),
  dave: secret(randomBytes(24).toString('base64url')),
};
const tokenFile = (names) =>
  names
    .map((name) => `${name}:${tokens[name]}${name === 'alice' ? ' files:read config:write' : ''}`)
    .join('\n') + '\n';
writeFileSync('tokens', '# clients of clap-demo\n' + tokenFile(['alice', 'bob', 'dave']));

const b64url = (data) => Buffer.from(data).toString('base64url');

/** A key pair of `type` ('RS256' or 'ES256') with its public JWK. */
function keyPair(alg, kid) {
  const { privateKey, publicKey } =
    alg === 'RS256'
      ? generateKeyPairSync('rsa', { modulusLength: 2048 })
      : generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { alg, kid, privateKey, jwk: { ...publicKey.export({ format: 'jwk' }), kid, alg, use: 'sig' } };
}

/** A JWT with `claims`, signed by `key`. */
function jwt(key, claims) {
  const header = { alg: key.alg, typ: 'at+jwt', kid: key.kid };
  const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}`;
  const options = key.alg === 'ES256' ? { key: key.privateKey, dsaEncoding: 'ieee-p1363' } : key.privateKey;
  return secret(`${input}.${b64url(sign('sha256', Buffer.from(input), options))}`);
}

const rsa = keyPair('RS256', 'rsa-1');
const ec = keyPair('ES256', 'ec-1');
const rotated = keyPair('ES256', 'ec-2');
const stranger = keyPair('ES256', 'ec-1'); // claims the id of a real key
let keySet = { keys: [rsa.jwk, ec.jwk] };
let keySetFetches = 0;
writeFileSync('jwks.json', JSON.stringify(keySet));

// The OAuth issuer: its metadata and its keys, on loopback.
const issuerServer = createServer((request, response) => {
  const send = (status, body) => {
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(JSON.stringify(body));
  };
  if (request.url === '/.well-known/oauth-authorization-server') {
    send(200, { issuer, jwks_uri: `${issuer}/jwks`, response_types_supported: ['code'] });
  } else if (request.url === '/jwks') {
    keySetFetches += 1;
    send(200, keySet);
  } else {
    send(404, { error: 'not found' });
  }
});
await new Promise((resolve) => issuerServer.listen(0, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${issuerServer.address().port}`;

const now = Math.floor(Date.now() / 1000);
const claims = (extra) => ({ iss: issuer, aud: AUDIENCE, iat: now, exp: now + 600, ...extra });

/** Start the server; resolve with the process, its URL and its standard error so far. */
function startServer() {
  return new Promise((resolve, reject) => {
    const listen = proxy
      ? ['proxy', '--listen', '127.0.0.1:0', '--audit', 'audit.jsonl']
      : ['mcp', 'stream', '--host', '127.0.0.1', '--port', '0'];
    const args = [
      ...listen,
      '--auth-token-file', 'tokens',
      '--oauth-issuer', issuer, '--oauth-audience', AUDIENCE,
      '--access-log', 'access.jsonl',
      '--max-body-bytes', '64KiB',
      '--max-sessions-per-token', '3',
      ...(proxy ? ['--', ...serverCommand] : []),
    ];
    const server = spawn(binary, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    const state = { server, stderr: '' };
    server.stderr.setEncoding('utf8');
    server.stderr.on('data', (chunk) => {
      state.stderr += chunk;
      const match = state.stderr.match(/serving MCP at (http:\/\/\S+)\n/);
      if (match && !state.url) {
        state.url = match[1];
        resolve(state);
      }
    });
    server.on('error', reject);
    server.on('exit', (code) => reject(new Error(`server exited early (${code}): ${state.stderr}`)));
  });
}

if (proxy) {
  writeFileSync(
    'toolschema.toml',
    '[proxy.tool-scopes]\nsearch = "files:read"\ndelete_everything = "config:write"\n',
  );
}
const server = await startServer();
const url = server.url;
const base = url.replace(/\/mcp$/, '');

const initialize = JSON.stringify({
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'auth-test', version: '1.0.0' } },
});

/** A plain POST to the endpoint; resolves with status, challenge, session id and body. */
async function post(body, headers = {}) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body,
  });
  const text = await response.text();
  let parsed = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // an event stream
  }
  return {
    status: response.status,
    wwwAuthenticate: response.headers.get('www-authenticate'),
    sessionId: response.headers.get('mcp-session-id'),
    body: response.status === 200 ? null : parsed,
  };
}

const bearer = (token) => ({ authorization: `Bearer ${token}` });

async function deleteSession(token, sessionId) {
  const response = await fetch(url, { method: 'DELETE', headers: { ...bearer(token), 'mcp-session-id': sessionId } });
  return response.status;
}

/** Connect the SDK client with `token` in requestInit headers, run `work`, close the session. */
async function session(token, work) {
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: bearer(token) } });
  const client = new Client({ name: 'http-auth', version: '1.0.0' });
  try {
    await client.connect(transport);
  } catch (error) {
    return { connectError: { code: error.code, message: error.message } };
  }
  const tools = (await client.listTools()).tools.map((tool) => tool.name);
  const calls = {};
  for (const [label, call] of Object.entries(await work())) {
    calls[label] = await client.callTool(call).then(
      (result) => ({ result }),
      (error) => ({ error: { code: error.code, message: error.message } }),
    );
  }
  await transport.terminateSession();
  await client.close();
  return { tools, calls };
}

// The same three kinds of tools on either server: one anyone may call, one that needs
// files:read, one that needs config:write.
const greet = proxy
  ? { name: 'echo', arguments: { message: 'Ada' } }
  : { name: 'clap-demo_greet', arguments: { name: 'Ada' } };
const listFiles = proxy
  ? { name: 'search', arguments: { query: 'tokens' } }
  : { name: 'clap-demo_files_list', arguments: { paths: ['tokens'], format: 'json' } };
const setConfig = proxy
  ? { name: 'delete_everything', arguments: {} }
  : { name: 'clap-demo_config_set', arguments: { key: 'mode', value: 'fast', dry_run: true } };
const all = async () => ({ greet, listFiles, setConfig });

const out = { issuer, audience: AUDIENCE, url };

// Without a token: 401 and the challenge.
out.noToken = await post(initialize);
out.wrongScheme = await post(initialize, { authorization: `Basic ${b64url('alice:x')}` });

// Bearer tokens from the file.
out.alice = await session(tokens.alice, all);
out.bob = await session(tokens.bob, all);
out.unknownToken = await session(secret(randomBytes(24).toString('base64url')), all);

// JWTs from the issuer.
out.rs256 = await session(jwt(rsa, claims({ sub: 'user-rs', scope: 'files:read' })), all);
out.es256 = await session(jwt(ec, claims({ sub: 'user-ec', scope: 'files:read config:write' })), all);
out.jwtRefused = {};
for (const [label, token] of Object.entries({
  expired: jwt(ec, claims({ sub: 'user-ec', exp: now - 600 })),
  notYet: jwt(ec, claims({ sub: 'user-ec', nbf: now + 600 })),
  audience: jwt(ec, claims({ sub: 'user-ec', aud: 'https://other.example/mcp' })),
  issuer: jwt(rsa, claims({ sub: 'user-rs', iss: 'https://evil.example' })),
  signature: jwt(stranger, claims({ sub: 'user-ec' })),
})) {
  out.jwtRefused[label] = await session(token, all);
}

// The issuer rotates to a key the server has not seen: it fetches the keys again.
keySet = { keys: [rsa.jwk, rotated.jwk] };
const fetchesBefore = keySetFetches;
out.rotated = await session(jwt(rotated, claims({ sub: 'user-rotated', scope: 'config:write' })), all);
out.keySetFetches = keySetFetches - fetchesBefore;

// The protected resource metadata.
out.metadata = {};
for (const path of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
  const response = await fetch(base + path);
  out.metadata[path] = { status: response.status, body: await response.json() };
}

// Limits: body, head, sessions per token, foreign origins, other clients' sessions.
out.bodyTooLarge = await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', pad: 'x'.repeat(100_000) }), bearer(tokens.dave));
out.headTooLarge = await post(initialize, { ...bearer(tokens.dave), 'x-padding': 'x'.repeat(20_000) }).catch((error) => ({ error: String(error) }));
out.foreignOrigin = await post(initialize, { ...bearer(tokens.dave), origin: 'http://evil.example.com' });
const daveSessions = [];
for (let i = 0; i < 4; i++) {
  daveSessions.push(await post(initialize, bearer(tokens.dave)));
}
out.sessions = daveSessions.map(({ status, body }) => ({ status, body }));
out.otherClientsSession = await post(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }), {
  ...bearer(tokens.bob),
  'mcp-session-id': daveSessions[0].sessionId,
  'mcp-protocol-version': '2025-11-25',
});
out.deleted = await deleteSession(tokens.dave, daveSessions[0].sessionId);
out.afterDelete = (await post(initialize, bearer(tokens.dave))).status;

// SIGHUP reads the token file again: carol in, alice out.
writeFileSync('tokens', tokenFile(['carol', 'bob', 'dave']));
server.server.kill('SIGHUP');
let carol = null;
for (let i = 0; i < 100 && carol?.status !== 200; i++) {
  await new Promise((resolve) => setTimeout(resolve, 50));
  carol = await post(initialize, bearer(tokens.carol));
}
out.reload = { carol: carol.status, alice: (await post(initialize, bearer(tokens.alice))).status };
await deleteSession(tokens.carol, carol.sessionId);

// Stop the server and the issuer.
out.shutdown = await new Promise((resolve) => {
  server.server.removeAllListeners('exit');
  server.server.on('exit', (code, signal) => resolve({ code, signal }));
  server.server.kill('SIGTERM');
});
issuerServer.close();
out.stderr = server.stderr;
out.secrets = secrets;
clearTimeout(watchdog);
process.stdout.write(JSON.stringify(out, null, 2) + '\n');
