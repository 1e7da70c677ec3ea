#!/usr/bin/env bash
# Benchmark of `toolschema serve` (the test command runs it only with --smoke): a catalog of
# 10,000 tools, one of them search_docs from examples/catalog.json; 64 concurrent callers POST
# interceptor/invoke over HTTP on loopback for 20 s (valid and invalid arguments in turn, every
# answer checked); decisions per second, p50/p99 per decision, the service's memory after
# loading the catalog and at its peak. In the same run, the same decisions in-process (the
# example serve_decisions: the gate's admission as the service makes it, without HTTP).
#
#   ./scripts/bench-serve.sh [--tools N] [--callers N] [--seconds N] [--calls N]
#
# --smoke (see scripts/usage.sh): 100 tools, 4 callers for 2 s, 200 calls in-process, debug builds
# (options given with it win: --smoke --tools 10000 ... is the full run in the dev profile).
# shellcheck source=scripts/usage.sh
source "$(dirname "$0")/usage.sh"
set -euo pipefail
cd "$(dirname "$0")/.."
tools=10000 callers=64 seconds=20 calls=200000
if $smoke; then
  tools=100 callers=4 seconds=2 calls=200
fi
while [ $# -gt 0 ]; do
  case "$1" in
    --tools) tools=$2; shift 2 ;;
    --callers) callers=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --calls) calls=$2; shift 2 ;;
    *) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
toolschema=$(bench_binary toolschema toolschema-cli)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
catalog="$work/catalog.json"
# search_docs as examples/catalog.json has it, and tools-1 .. tools-(N-1): small objects each.
python3 - "$catalog" "$tools" <<'PY'
import json, sys
path, count = sys.argv[1], int(sys.argv[2])
with open("examples/catalog.json") as f:
    source = json.load(f)
tools = source["tools"] if isinstance(source, dict) else source
search = next(t for t in tools if t["name"] == "search_docs")
out = [search]
for i in range(1, count):
    out.append({"name": f"tool_{i}", "description": f"Tool number {i}.",
                "inputSchema": {"type": "object", "properties": {
                    "id": {"type": "integer", "minimum": 0},
                    "name": {"type": "string", "maxLength": 64}},
                    "required": ["id"], "additionalProperties": False}})
with open(path, "w") as f:
    json.dump({"tools": out}, f)
PY
if $smoke; then
  cargo build --quiet -p toolschema-proxy --all-features --locked --example serve_decisions
  in_process=target/debug/examples/serve_decisions
else
  cargo build --quiet --release -p toolschema-proxy --example serve_decisions
  in_process=target/release/examples/serve_decisions
fi
echo "in-process (the gate's admission, no HTTP):"
"$in_process" "$catalog" search_docs "$calls"
echo "over HTTP ($callers callers, keep-alive, loopback):"
node interop/bench-serve.mjs "$toolschema" "$catalog" search_docs --callers "$callers" --seconds "$seconds"
