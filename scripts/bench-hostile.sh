#!/usr/bin/env bash
# Benchmark of hostile but valid inputs (the test command runs it only with --smoke): a 1.75 MB tools/call with
# 8,000 undeclared arguments against a closed 200-argument tool, through `toolschema proxy` (time
# to its answer, the proxy's CPU time, a ping's wait behind it) and through `toolschema validate`;
# then the proxy's memory after a client listed 5,000 tools 100 times without calling any.
#
#   ./scripts/bench-hostile.sh [--arguments N] [--tools N] [--listings N]
#
# It exits 1 when the proxy or `validate` lets the call through, or a listing loses tools.
# --smoke (see scripts/usage.sh): 400 arguments, 3 listings of 500 tools, the debug binary.
# shellcheck source=scripts/usage.sh
source "$(dirname "$0")/usage.sh"
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -d interop/node_modules/@modelcontextprotocol/sdk ]; then
  (cd interop && npm ci --no-audit --no-fund --loglevel=error)
fi
toolschema=$(bench_binary toolschema toolschema-cli)
if $smoke; then
  set -- "$@" --arguments 400 --tools 500 --listings 3
fi
exec node interop/bench-hostile.mjs "$toolschema" "$@"
