#!/usr/bin/env bash
# Measures toolschema-clap on the clap-demo example: the start-up cost of building the tools
# (`clap-demo mcp tools`, which maps every argument and probes the value parsers), against the
# demo's own start-up, and tools/call latency through the TypeScript SDK client. Release build.
# The test command runs it only with --smoke. Needs interop/node_modules (./scripts/test.sh installs it).
# It exits 1 when the demo fails, or a call is not answered as it should be.
#
#   RUNS=50 CALLS=500 ./scripts/bench-clap.sh
#
# --smoke (see scripts/usage.sh): 3 runs, 5 calls each, the debug binary.
# shellcheck source=scripts/usage.sh
source "$(dirname "$0")/usage.sh"
set -euo pipefail
cd "$(dirname "$0")/.."
demo=$(bench_binary clap-demo clap-demo)
runs=${RUNS:-$(if $smoke; then echo 3; else echo 50; fi)}
calls=${CALLS:-$(if $smoke; then echo 5; else echo 500; fi)}

median_ms() { # median wall time of a command over $runs runs
  python3 - "$runs" "$@" <<'PY'
import subprocess, sys, time
runs, command = int(sys.argv[1]), sys.argv[2:]
times = []
for _ in range(runs):
    started = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, check=True)
    times.append(time.perf_counter() - started)
times.sort()
print(f"{times[len(times) // 2] * 1000:.2f} ms")
PY
}

echo "clap-demo greet Ada (the CLI alone): $(median_ms "$demo" greet Ada)"
echo "clap-demo mcp tools -o - (build and list the tools): $(median_ms "$demo" mcp tools -o -)"
node interop/clap-demo-bench.mjs "$demo" "$calls"
