#!/usr/bin/env bash
# Benchmark `toolschema lint` against mcptest's `schema-lint` on a 10,000-tool catalog built from
# the real catalogs of server-everything and server-filesystem (as scripts/test-data.sh captures them
# into target/test-data/catalogs; tools renamed to be unique, pretty-printed, about 12 MB): wall time and peak memory (RSS) of the whole process, all rules on, median of RUNS runs.
# The two commands run in turns so both see the same machine load.
#
# The test command runs it only with --smoke. Needs python3 and cargo (Linux: peak memory comes from wait4); installs
# mcptest 1.3.0 into $MCPTEST_ROOT (outside the repository) when it is not there yet, which
# compiles for a few minutes.
#
#   RUNS=15 ./scripts/bench-lint.sh
#
# --smoke (see scripts/usage.sh): a 200-tool catalog, one run, the debug binary; mcptest is run
# only when it is already installed in $MCPTEST_ROOT (it is not installed in smoke mode).
# shellcheck source=scripts/usage.sh
source "$(dirname "$0")/usage.sh"
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-$(if $smoke; then echo 1; else echo 9; fi)}
MCPTEST_ROOT=${MCPTEST_ROOT:-${TMPDIR:-/tmp}/toolschema-bench-mcptest}
MCPTEST_VERSION=1.3.0

# shellcheck source=scripts/bench-prepare.sh
source scripts/bench-prepare.sh

mcptest="$MCPTEST_ROOT/bin/mcptest"
if [ ! -x "$mcptest" ]; then
  if $smoke; then
    echo "==> smoke mode: mcptest is not in $MCPTEST_ROOT, so only toolschema runs"
    mcptest=""
  else
    echo "==> installing mcptest $MCPTEST_VERSION into $MCPTEST_ROOT"
    cargo install mcptest --version "$MCPTEST_VERSION" --root "$MCPTEST_ROOT"
  fi
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
if not mcptest:  # smoke mode without mcptest installed
    del commands["mcptest schema-lint"]
results = {name: ([], []) for name in commands}

for _ in range(runs):
    for name, argv in commands.items():
        wall, rss = run(argv, ok=(0, 1))  # both exit 1 when they find something
        results[name][0].append(wall)
        results[name][1].append(rss)

med = statistics.median
print(f"{'':22}{'wall (median)':>15}{'peak RSS (median)':>20}")
for name, (wall, rss) in results.items():
    print(f"{name:22}{med(wall):>13.4f} s{med(rss) / 1024:>16.1f} MiB")
(tw, tm) = results["toolschema lint"]
if "mcptest schema-lint" in results:
    (mw, mm) = results["mcptest schema-lint"]
    print(f"{'toolschema / mcptest':22}{med(tw) / med(mw):>15.3f}{med(tm) / med(mm):>20.3f}")
    print(f"wall min..max: mcptest {min(mw):.3f}..{max(mw):.3f} s, toolschema {min(tw):.3f}..{max(tw):.3f} s")
else:
    print(f"wall min..max: toolschema {min(tw):.3f}..{max(tw):.3f} s")
PY
