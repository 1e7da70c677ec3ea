#!/usr/bin/env bash
# Benchmark of many servers behind one front (the test command runs it only with --smoke): three
# TypeScript SDK servers over Streamable HTTP, called by concurrent sessions of the TypeScript
# SDK client through one `toolschema proxy --listen --server a=URL --server b=URL --server c=URL`
# and through three separate `toolschema proxy --listen --upstream URL`, in interleaved rounds of
# one run; calls per second, p50/p99 latency, errors, and the ratio front/separate (goal >= 0.9).
#
#   ./scripts/bench-servers.sh [--sessions N] [--seconds N] [--rounds N]
#
# --smoke (see scripts/usage.sh): 3 sessions, 2 s a path in one round, the debug binary.
# shellcheck source=scripts/usage.sh
source "$(dirname "$0")/usage.sh"
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -d interop/node_modules/@modelcontextprotocol/sdk ]; then
  (cd interop && npm ci --no-audit --no-fund --loglevel=error)
fi
toolschema=$(bench_binary toolschema toolschema-cli)
if $smoke; then
  set -- "$@" --sessions 3 --seconds 2 --rounds 1
fi
exec node interop/bench-servers.mjs "$toolschema" "$@"
