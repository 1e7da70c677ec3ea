#!/usr/bin/env node
// An HTTPS endpoint on loopback with a self-signed certificate (interop/fixtures), to check that
// `toolschema snapshot --url https://...` speaks TLS and refuses a certificate it cannot trust.
// Prints "listening on port N" on stderr once ready.
import { readFileSync } from "node:fs";
import { createServer } from "node:https";

const fixture = (name) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url));
const server = createServer(
  { key: fixture("self-signed-key.pem"), cert: fixture("self-signed-cert.pem") },
  (request, response) => {
    response.writeHead(500).end();
  },
);
server.listen(0, "127.0.0.1", () => {
  process.stderr.write(`listening on port ${server.address().port}\n`);
});
