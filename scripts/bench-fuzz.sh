#!/usr/bin/env bash
# Benchmark `toolschema fuzz` against `mcptest fuzz` (crates.io mcptest 1.3.0) on two servers:
# the project's faulty server (interop/faulty-server.mjs: one planted fault per check, one correct
# tool) and npm server-everything, in two settings: each fuzzer's defaults (toolschema: --timeout
# 10, --budget 50; mcptest: its own), and the same per-call timeout for both (TIMEOUT seconds:
# toolschema --timeout, mcptest --max-call-ms). Both keep their default case counts; they run in
# turns, RUNS times each, so both see the same machine load (say how loaded it was: the figures
# move with it).
#
# Per run it records wall time, cases sent, cases per second, and what was found: for the faulty
# server, which of the 8 planted faults each fuzzer reported with the right check (mcptest has
# four checks of its own: crash, hang, protocol-violation, leak); for server-everything, the
# findings. Prints the median of each figure and the planted faults found in every run.
#
# The test command runs it only with --smoke. Needs node and python3; builds toolschema in release mode and
# installs mcptest into $MCPTEST_ROOT (outside the repository) when it is not there yet, which
# compiles for several minutes.
#
#   RUNS=5 TIMEOUT=2 ./scripts/bench-fuzz.sh
#   TOOLSCHEMA_BIN=target/debug/toolschema MCPTEST_ROOT=/tmp/mcptest RUNS=1 ./scripts/bench-fuzz.sh
#
# It exits 1 when a fuzzer ends with an error (toolschema: an exit status other than 0 and 1, or
# a report that does not parse). --smoke (see scripts/usage.sh): one run, the same-timeout
# setting only (TIMEOUT=1), toolschema with --cases 10, the debug binary; mcptest runs only when
# it is already installed in $MCPTEST_ROOT (it is not installed in smoke mode).
# shellcheck source=scripts/usage.sh
source "$(dirname "$0")/usage.sh"
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-$(if $smoke; then echo 1; else echo 3; fi)}
TIMEOUT=${TIMEOUT:-$(if $smoke; then echo 1; else echo 2; fi)}
SEED=${SEED:-1}
MCPTEST_ROOT=${MCPTEST_ROOT:-${TMPDIR:-/tmp}/toolschema-bench-mcptest}
MCPTEST_VERSION=1.3.0

for needed in interop/node_modules/.bin/mcp-server-everything interop/faulty-server.mjs; do
  if [ ! -e "$needed" ]; then
    echo "bench-fuzz: $needed is missing; run ./scripts/test.sh first (it installs interop/)" >&2
    exit 2
  fi
done

# TOOLSCHEMA_BIN=path/to/toolschema measures that build instead (say which in the figures);
# TOOLSCHEMA is its older name.
if [ -n "${TOOLSCHEMA_BIN:-${TOOLSCHEMA:-}}" ]; then
  toolschema="${TOOLSCHEMA_BIN:-$TOOLSCHEMA}"
else
  echo "==> toolschema ($(if $smoke; then echo "debug, smoke mode"; else echo release; fi))"
  toolschema=$(bench_binary toolschema toolschema-cli)
fi

mcptest="$MCPTEST_ROOT/bin/mcptest"
if [ ! -x "$mcptest" ]; then
  if $smoke; then
    echo "==> smoke mode: mcptest is not in $MCPTEST_ROOT, so only toolschema runs"
    mcptest=""
  else
    echo "==> installing mcptest $MCPTEST_VERSION into $MCPTEST_ROOT"
    cargo install mcptest --version "$MCPTEST_VERSION" --locked --root "$MCPTEST_ROOT"
  fi
fi

settings_shown="defaults and --timeout ${TIMEOUT}s"
if $smoke; then settings_shown="--timeout ${TIMEOUT}s (smoke mode)"; fi
echo "==> $RUNS runs each, in turns, $settings_shown (load average: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo n/a))"
python3 - "$RUNS" "$TIMEOUT" "$SEED" "$toolschema" "$mcptest" "$(command -v node)" "$PWD" "$smoke" <<'PY'
import json, re, shlex, statistics, subprocess, sys, time

runs, timeout, seed = int(sys.argv[1]), sys.argv[2], sys.argv[3]
toolschema, mcptest, node, root = sys.argv[4:8]
smoke = sys.argv[8] == "true"
# Smoke mode: a few cases a tool, only the same-timeout setting (the defaults wait 10 s a hang).
cases = ["--cases", "10"] if smoke else []
servers = {
    "faulty": [node, f"{root}/interop/faulty-server.mjs"],
    "everything": [f"{root}/interop/node_modules/.bin/mcp-server-everything"],
}
planted = {
    ("divide", "crash"), ("lookup", "hang"), ("convert", "protocol-violation"),
    ("find_user", "internal-error"), ("set_volume", "accepted-invalid"),
    ("weather", "output-schema"), ("read_file", "leak"), ("search", "rejected-valid"),
}

# The settings: each fuzzer's defaults, then the same per-call timeout for both.
settings = {"defaults": None, f"timeout {timeout}s": timeout}
if smoke:
    del settings["defaults"]
fuzzers = ["toolschema", "mcptest"] if mcptest else ["toolschema"]

def run_toolschema(server, timeout):
    start = time.monotonic()
    given = ["--timeout", timeout] if timeout else []
    done = subprocess.run(
        [toolschema, "fuzz", "--seed", seed, *given, *cases, "--format", "json", "--", *server],
        capture_output=True, text=True)
    wall = time.monotonic() - start
    if done.returncode not in (0, 1):  # 1: findings
        sys.exit(f"toolschema fuzz exited {done.returncode} on {server}:\n{done.stderr}")
    try:
        report = json.loads(done.stdout)
    except ValueError as error:
        sys.exit(f"toolschema fuzz printed no JSON report on {server} ({error}):\n{done.stderr}")
    found = {(f["tool"], f["check"]) for f in report["findings"]}
    return wall, report["summary"]["cases"], found

MCPTEST_LINE = re.compile(r"^\s*\[(ok|FAIL)\]\s+(\S+)\s+\((\d+) cases\)(?::\s*(.*))?$")

def run_mcptest(server, timeout):
    start = time.monotonic()
    given = ["--max-call-ms", str(int(float(timeout) * 1000))] if timeout else []
    done = subprocess.run(
        [mcptest, "fuzz", "--server-command", shlex.join(server), "--seed", seed, *given],
        capture_output=True, text=True)
    wall = time.monotonic() - start
    cases, found = 0, set()
    for line in done.stdout.splitlines():
        m = MCPTEST_LINE.match(line)
        if not m:
            continue
        cases += int(m.group(3))
        for count, check in re.findall(r"(\d+) (crash|hang|protocol-violation|leak)", m.group(4) or ""):
            if int(count) > 0:
                found.add((m.group(2), check))
    return wall, cases, found

results = {}
for i in range(runs):
    for setting, per_call in settings.items():
        for name, server in servers.items():
            for fuzzer in fuzzers:
                run = run_toolschema if fuzzer == "toolschema" else run_mcptest
                results.setdefault((setting, name, fuzzer), []).append(run(server, per_call))

print()
print(f"{'setting':<12} {'server':<11} {'fuzzer':<11} {'wall s':>8} {'cases':>6} {'cases/s':>8}  found (median of {runs} runs; found: every run)")
for (setting, name, fuzzer), rows in results.items():
    wall = statistics.median(r[0] for r in rows)
    cases = statistics.median(r[1] for r in rows)
    rate = statistics.median(r[1] / r[0] for r in rows)
    always = set.intersection(*(r[2] for r in rows))
    if name == "faulty":
        hit = sorted(always & planted)
        what = f"{len(hit)}/8 planted faults: " + ", ".join(f"{t} {c}" for t, c in hit)
        extra = sorted(set.union(*(r[2] for r in rows)) - planted)
        if extra:
            what += "; also reported: " + ", ".join(f"{t} {c}" for t, c in extra)
    else:
        what = f"{len(always)} findings: " + ", ".join(f"{t} {c}" for t, c in sorted(always, key=str))
    print(f"{setting:<12} {name:<11} {fuzzer:<11} {wall:>8.2f} {cases:>6.0f} {rate:>8.1f}  {what}")

for setting in settings if mcptest else []:
    for name in servers:
        ours = [r[0] for r in results[(setting, name, "toolschema")]]
        theirs = [r[0] for r in results[(setting, name, "mcptest")]]
        print(f"{setting}, {name}: toolschema / mcptest wall {statistics.median(ours) / statistics.median(theirs):.2f}x"
              f" (runs: toolschema {min(ours):.2f}..{max(ours):.2f} s, mcptest {min(theirs):.2f}..{max(theirs):.2f} s)")
PY
