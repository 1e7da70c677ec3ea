// Measures tools/call latency of `clap-demo mcp start` with the TypeScript SDK client: a valid
// call (validated, checked by clap, run as a child process) and an invalid one (refused by the
// schema, nothing runs). Run by scripts/bench-clap.sh. Exits 1 when a call is not answered as
// it should be: the valid one runs, the invalid one is refused.
//
// usage: node clap-demo-bench.mjs CLAP_DEMO_BINARY CALLS

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const [binary, count] = process.argv.slice(2);
const calls = Number(count ?? 200);
const client = new Client({ name: 'toolschema-clap-bench', version: '1.0.0' });
await client.connect(new StdioClientTransport({ command: binary, args: ['mcp', 'start'] }));
await client.listTools();
const cases = [
  ['valid call (runs `greet`)', { name: 'Ada', times: 2 }, false],
  ['invalid call (refused, nothing runs)', { name: 'Ada', times: 11 }, true],
];
let wrong = 0;
for (const [label, args, refused] of cases) {
  const times = [];
  for (let i = 0; i < calls; i++) {
    const started = performance.now();
    const result = await client.callTool({ name: 'clap-demo_greet', arguments: args });
    times.push(performance.now() - started);
    if ((result.isError === true) !== refused) wrong++;
  }
  times.sort((a, b) => a - b);
  const at = (q) => times[Math.min(times.length - 1, Math.floor(times.length * q))].toFixed(2);
  console.log(`${label}: median ${at(0.5)} ms, p90 ${at(0.9)} ms over ${calls} calls`);
}
await client.close();
if (wrong > 0) {
  console.error(`clap-demo-bench: ${wrong} calls were not answered as they should be`);
  process.exit(1);
}
