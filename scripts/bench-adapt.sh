#!/usr/bin/env bash
# Benchmark `toolschema adapt` on the 10,000-tool catalog of scripts/bench-lint.sh (the real
# catalogs of server-everything and server-filesystem as scripts/test-data.sh captures them into
# target/test-data/catalogs, tools renamed to be unique, pretty-printed, about 12 MB), to every
# profile: wall time and peak memory (RSS) of the whole process, median of RUNS runs. The profiles
# run in turns so all see the same machine load; output goes to /dev/null.
#
# The test command runs it only with --smoke. Needs python3 and cargo (Linux: peak memory comes from wait4).
#
#   RUNS=9 ./scripts/bench-adapt.sh
#
# --smoke (see scripts/usage.sh): a 200-tool catalog, one run, the debug binary.
# shellcheck source=scripts/usage.sh
source "$(dirname "$0")/usage.sh"
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-$(if $smoke; then echo 1; else echo 5; fi)}

# shellcheck source=scripts/bench-prepare.sh
source scripts/bench-prepare.sh

echo "==> $RUNS runs each, in turns (load average: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo n/a))"
PYTHONPATH=scripts python3 - "$RUNS" "$catalog" "$toolschema" <<'PY'
import json, statistics, subprocess, sys
from bench_measure import run
runs, catalog, toolschema = int(sys.argv[1]), sys.argv[2], sys.argv[3]
profiles = ["openai", "openai-strict", "anthropic", "gemini", "gemini-openapi"]
results = {p: ([], []) for p in profiles}

for _ in range(runs):
    for p in profiles:
        wall, rss = run([toolschema, "adapt", catalog, "--to", p])
        results[p][0].append(wall)
        results[p][1].append(rss)

# What one run produces, for the record.
sizes = {}
for p in profiles:
    out = subprocess.run([toolschema, "adapt", catalog, "--to", p], capture_output=True, check=True)
    document = json.loads(out.stdout)
    sizes[p] = (len(document["tools"]), len(document["losses"]), len(out.stdout))

med = statistics.median
print(f"{'profile':16}{'wall (median)':>15}{'peak RSS (median)':>20}{'tools':>8}{'losses':>9}{'output':>10}")
for p in profiles:
    walls, rss = results[p]
    tools, losses, size = sizes[p]
    print(f"{p:16}{med(walls):>13.3f} s{med(rss) / 1024:>16.1f} MiB{tools:>8}{losses:>9}{size / 1e6:>8.1f} MB")
print("wall min..max: " + ", ".join(f"{p} {min(results[p][0]):.3f}..{max(results[p][0]):.3f} s" for p in profiles))
PY
