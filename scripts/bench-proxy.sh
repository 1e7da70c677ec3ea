#!/usr/bin/env bash
# Benchmark of `toolschema proxy` (not part of the test command): sequential tools/call round
# trips on the echo tool of a TypeScript SDK server, directly and through the proxy, interleaved
# in one run; p50/p99 latency, calls per second, and the proxy's peak memory with 1,000 tools.
# With --metrics, the proxy with `--metrics 127.0.0.1:0` is a third path in the same rounds, and
# its p50 is compared with the plain proxy's (goal: at most 3% more).
#
#   ./scripts/bench-proxy.sh [--calls N] [--rounds N] [--tools N] [--metrics]
# shellcheck source=scripts/usage.sh
source "$(dirname "$0")/usage.sh"
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -d interop/node_modules/@modelcontextprotocol/sdk ]; then
  (cd interop && npm ci --no-audit --no-fund --loglevel=error)
fi
cargo build --release --locked -p toolschema-cli
exec node interop/bench-client.mjs "$PWD/target/release/toolschema" "$@"
