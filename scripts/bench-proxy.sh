#!/usr/bin/env bash
# Benchmark of `toolschema proxy` (the test command runs it only with --smoke): sequential
# tools/call round trips on the echo tool of a TypeScript SDK server, directly, through the proxy,
# and through the proxy exporting traces to a local OTLP receiver, interleaved in one run;
# p50/p99 latency, calls per second, the overhead of tracing (goal: at most 10% on p50), and the
# proxy's peak memory with 1,000 tools. With --metrics, the proxy with `--metrics 127.0.0.1:0` is
# one more path in the same rounds, and its p50 is compared with the plain proxy's (goal: at most
# 3% more).
#
#   ./scripts/bench-proxy.sh [--calls N] [--rounds N] [--tools N] [--warmup N] [--metrics]
#
# --smoke (see scripts/usage.sh): one round of 20 calls a path after 10 warm-up calls, 50 tools,
# the debug binary.
# shellcheck source=scripts/usage.sh
source "$(dirname "$0")/usage.sh"
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -d interop/node_modules/@modelcontextprotocol/sdk ]; then
  (cd interop && npm ci --no-audit --no-fund --loglevel=error)
fi
toolschema=$(bench_binary toolschema toolschema-cli)
if $smoke; then
  set -- "$@" --calls 20 --rounds 1 --tools 50 --warmup 10
fi
exec node interop/bench-client.mjs "$toolschema" "$@"
