#!/usr/bin/env bash
# Soak of `toolschema proxy --listen --upstream` over Streamable HTTP (not part of the test
# command; its short version is, in crates/toolschema-cli/tests/soak_http.rs): 64 well-behaved
# TypeScript SDK sessions, each with its own token, call a recording server's echo tool through
# the proxy, first alone for a baseline, then for 10 minutes beside hostile peers: connections
# that stall mid-head (or mid-body) up to the proxy's descriptor limit, clients that stop reading
# while the server floods them with notifications, calls with invalid arguments, guessed tokens.
# It reports the well-behaved errors, p50/p99 latency in both phases, the proxy's peak RSS and
# its descriptors (sampled every second), what the hostile peers saw and the invalid calls the
# server received, and exits 1 when a goal is missed (see interop/soak-http.mjs).
#
#   ./scripts/soak-http.sh [--short] [--release | --debug | --binary PATH] [--duration S]
#                          [--sessions N] [--baseline S] [--settle S] [--fd-limit N]
#                          [--proxy-arg ARG]... (more in interop/soak-http.mjs)
#
# The full soak builds and runs the release binary; --short (about a minute, 8 sessions, small
# hostile counts) runs target/debug/toolschema, the binary the test command builds.
# --smoke (see scripts/usage.sh) is --short, which is what `cargo test --test soak_http` runs.
# shellcheck source=scripts/usage.sh
source "$(dirname "$0")/usage.sh"
set -euo pipefail
cd "$(dirname "$0")/.."
profile=""
binary=""
short=false
pass=()
while [ $# -gt 0 ]; do
  case "$1" in
    --release) profile=release ;;
    --debug) profile=debug ;;
    --binary) binary="$2"; shift ;;
    --short) short=true; pass+=("$1") ;;
    *) pass+=("$1") ;;
  esac
  shift
done
if $smoke && ! $short; then
  short=true
  pass+=(--short)
fi
if [ ! -d interop/node_modules/@modelcontextprotocol/sdk ]; then
  (cd interop && npm ci --no-audit --no-fund --loglevel=error)
fi
if [ -z "$binary" ] && $smoke && [ -n "${TOOLSCHEMA_BIN:-}" ]; then
  binary=$TOOLSCHEMA_BIN
fi
if [ -z "$binary" ]; then
  if [ -z "$profile" ]; then
    if $short; then profile=debug; else profile=release; fi
  fi
  if [ "$profile" = release ]; then
    cargo build --release --locked -p toolschema-cli
  elif [ ! -x target/debug/toolschema ]; then
    cargo build --locked -p toolschema-cli
  fi
  binary="$PWD/target/$profile/toolschema"
fi
exec node interop/soak-http.mjs "$binary" "${pass[@]}"
