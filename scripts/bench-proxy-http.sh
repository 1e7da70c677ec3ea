#!/usr/bin/env bash
# Benchmark of `toolschema proxy` over Streamable HTTP (the test command runs it only with --smoke): 64
# concurrent sessions of the TypeScript SDK client call the echo tool of a TypeScript SDK server
# over Streamable HTTP for 30 s, directly and through `toolschema proxy --listen --upstream`, in
# interleaved rounds of one run; p50/p99 latency, calls per second, errors, the proxy's CPU time
# per call and its peak memory.
#
#   ./scripts/bench-proxy-http.sh [--sessions N] [--seconds N] [--rounds N]
#
# --smoke (see scripts/usage.sh): 4 sessions, 2 s a path in one round, the debug binary.
# shellcheck source=scripts/usage.sh
source "$(dirname "$0")/usage.sh"
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -d interop/node_modules/@modelcontextprotocol/sdk ]; then
  (cd interop && npm ci --no-audit --no-fund --loglevel=error)
fi
toolschema=$(bench_binary toolschema toolschema-cli)
if $smoke; then
  set -- "$@" --sessions 4 --seconds 2 --rounds 1
fi
exec node interop/bench-http-client.mjs "$toolschema" "$@"
