#!/usr/bin/env bash
# Failover run of `toolschema proxy` replicas (not part of the test command): three
# `toolschema proxy --listen --upstream` replicas in front of one upstream
# (interop/replica-upstream.mjs), HAProxy in front of them (Debian's `haproxy`, started here
# with a generated config, checking each replica's /readyz every 500 ms). 64 concurrent
# 2026-07-28 clients (spread round-robin) and 8 2025-11-25 sessions of the TypeScript SDK
# client (hashed on Mcp-Session-Id) call for 30 s; every fifth call has arguments the schema
# refuses. One replica is killed (SIGKILL) at 10 s. Prints one JSON object: calls served and
# failed, p50/p99, what each failed call's client saw (grouped by message), the time from the
# kill until the last failed call ended, the requests HAProxy sent each replica, and what
# reached the upstream (`upstream.invalid` must be 0).
#
#   ./scripts/bench-replicas.sh [--smoke] [--clients N] [--sessions N] [--seconds N]
#     [--kill-at SECONDS] [--check-ms MS] [--settle-ms MS] [--proxy-arg ARG]... [--config-out FILE]
#
# --smoke (see scripts/usage.sh; --short is the same) is what `cargo test --test
# replicas_failover` runs: 6 clients and 2 sessions for 6 s, the kill at 2 s, the debug binary.
# Options after it change the run. TOOLSCHEMA=path uses that binary instead of building one.
# shellcheck source=scripts/usage.sh
source "$(dirname "$0")/usage.sh"
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v haproxy >/dev/null 2>&1; then
  echo "bench-replicas: haproxy is not on PATH: apt-get install -y --no-install-recommends haproxy" >&2
  exit 1
fi
if [ ! -d interop/node_modules/@modelcontextprotocol/sdk ]; then
  (cd interop && npm ci --no-audit --no-fund --loglevel=error)
fi
if [ "${1:-}" = "--short" ]; then
  shift
  smoke=true
fi
binary="${TOOLSCHEMA:-}"
if [ -z "$binary" ]; then
  binary=$(bench_binary toolschema toolschema-cli)
fi
run=(--clients 64 --sessions 8 --seconds 30 --kill-at 10 --settle-ms 2000)
if $smoke; then
  run=(--clients 6 --sessions 2 --seconds 6 --kill-at 2 --settle-ms 2000)
fi
exec node interop/replica-failover.mjs "$binary" "$(command -v haproxy)" "${run[@]}" "$@"
