#!/usr/bin/env bash
# Benchmark of `toolschema proxy` (not part of the test command): sequential tools/call round
# trips on the echo tool of a TypeScript SDK server, directly, through the proxy, and through the
# proxy exporting traces to a local OTLP receiver, interleaved in one run; p50/p99 latency, calls
# per second, the overhead of tracing, and the proxy's peak memory with 1,000 tools.
#
#   ./scripts/bench-proxy.sh [--calls N] [--tools N]
# shellcheck source=scripts/usage.sh
source "$(dirname "$0")/usage.sh"
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -d interop/node_modules/@modelcontextprotocol/sdk ]; then
  (cd interop && npm ci --no-audit --no-fund --loglevel=error)
fi
cargo build --release --locked -p toolschema-cli
exec node interop/bench-client.mjs "$PWD/target/release/toolschema" "$@"
