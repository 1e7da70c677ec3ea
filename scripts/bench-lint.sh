#!/usr/bin/env bash
# Benchmark `toolschema lint` against mcptest's `schema-lint` on a 10,000-tool catalog built from
# the real catalogs of server-everything and server-filesystem (as scripts/test-data.sh captures them
# into target/test-data/catalogs; tools renamed to be unique, pretty-printed, about 12 MB): wall time and peak memory (RSS) of the whole process, all rules on, median of RUNS runs.
# The two commands run in turns so both see the same machine load.
#
# Not part of the test command. Needs python3 and cargo (Linux: peak memory comes from wait4); installs
# mcptest 1.3.0 into $MCPTEST_ROOT (outside the repository) when it is not there yet, which
# compiles for a few minutes.
#
#   RUNS=15 ./scripts/bench-lint.sh
# shellcheck source=scripts/usage.sh
source "$(dirname "$0")/usage.sh"
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-9}
MCPTEST_ROOT=${MCPTEST_ROOT:-${TMPDIR:-/tmp}/toolschema-bench-mcptest}
MCPTEST_VERSION=1.3.0

# shellcheck source=scripts/bench-prepare.sh
source scripts/bench-prepare.sh

mcptest="$MCPTEST_ROOT/bin/mcptest"
if [ ! -x "$mcptest" ]; then
  echo "==> installing mcptest $MCPTEST_VERSION into $MCPTEST_ROOT"
  cargo install mcptest --version "$MCPTEST_VERSION" --root "$MCPTEST_ROOT"
fi

echo "==> $RUNS runs each, in turns (load average: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo n/a))"
PYTHONPATH=scripts python3 - "$RUNS" "$catalog" "$mcptest" "$toolschema" <<'PY'
import statistics, sys
from bench_measure import run
runs, catalog, mcptest, toolschema = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
commands = {
    "mcptest schema-lint": [mcptest, "schema-lint", catalog],
    "toolschema lint": [toolschema, "lint", "--select", "ALL", catalog],
}
results = {name: ([], []) for name in commands}

for _ in range(runs):
    for name, argv in commands.items():
        wall, rss = run(argv, ok=(0, 1))  # both exit 1 when they find something
        results[name][0].append(wall)
        results[name][1].append(rss)

med = statistics.median
(mw, mm), (tw, tm) = results["mcptest schema-lint"], results["toolschema lint"]
print(f"{'':22}{'wall (median)':>15}{'peak RSS (median)':>20}")
print(f"{'mcptest schema-lint':22}{med(mw):>13.4f} s{med(mm) / 1024:>16.1f} MiB")
print(f"{'toolschema lint':22}{med(tw):>13.4f} s{med(tm) / 1024:>16.1f} MiB")
print(f"{'toolschema / mcptest':22}{med(tw) / med(mw):>15.3f}{med(tm) / med(mm):>20.3f}")
print(f"wall min..max: mcptest {min(mw):.3f}..{max(mw):.3f} s, toolschema {min(tw):.3f}..{max(tw):.3f} s")
PY
