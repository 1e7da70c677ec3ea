#!/usr/bin/env bash
# Per-call cost of checking tool-call arguments from Python: the toolschema module (the wheel of
# target/dist/, scripts/package.sh) against jsonschema_rs and jsonschema (PyPI, versions below),
# on the tools of the real catalogs in target/test-data/catalogs, in one run, in one venv.
# For each tool: one valid call (its required arguments) and one invalid call (a property of the
# wrong type, or an undeclared argument where the tool is closed), kept only when all three
# validators agree on the verdict. Valid calls are timed with is_valid; invalid calls with each
# library's way to get the messages (toolschema's validate, iter_errors for the others). Nothing
# is asserted of the figures: it prints them. It fails when no tool is left to time.
#
#   ./scripts/bench-python.sh           after ./scripts/package.sh (the `packaged` profile)
#   ./scripts/bench-python.sh --smoke   the wheel target/dist holds (the test command's is
#                                       built from the dev profile), the first catalog with a tool,
#                                       about a millisecond per figure
# shellcheck source=scripts/usage.sh
source "$(dirname "$0")/usage.sh"
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
dist=$root/target/dist
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n1)
shopt -s nullglob
wheels=("$dist"/toolschema-"$version"-cp39-abi3-*.whl)
shopt -u nullglob
[ "${#wheels[@]}" -eq 1 ] || { echo "no wheel in $dist: run scripts/package.sh" >&2; exit 1; }
catalogs=$root/target/test-data/catalogs
[ -d "$catalogs" ] || { echo "no $catalogs: run scripts/test-data.sh" >&2; exit 1; }
scratch=$(mktemp -d "${TMPDIR:-/tmp}/toolschema-bench-python.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
python3 -m venv "$scratch/venv"
"$scratch/venv/bin/pip" install --quiet --disable-pip-version-check "${wheels[0]}" \
  jsonschema-rs==0.29.1 jsonschema==4.23.0
cd "$scratch"
SMOKE=$smoke "$scratch/venv/bin/python" - "$catalogs" <<'PY'
import json, os, pathlib, sys, time
from importlib import metadata

import jsonschema
import jsonschema_rs
import toolschema

SAMPLE = {"string": "x", "integer": 1, "number": 1.5, "boolean": True, "array": [], "object": {}, "null": None}
WRONG = {"string": 12345, "integer": "twelve", "number": "1.5", "boolean": "yes", "array": {"a": 1}, "object": [1]}


def typed(schema):
    t = schema.get("type")
    return t if isinstance(t, str) else None


def calls(schema):
    props = schema.get("properties") or {}
    valid = {name: SAMPLE[typed(props.get(name, {})) or "string"] for name in schema.get("required", [])}
    wrong = next((n for n, s in props.items() if typed(s) in WRONG), None)
    invalid = dict(valid, **({wrong: WRONG[typed(props[wrong])]} if wrong else {"zz_undeclared": 1}))
    return valid, invalid


SMOKE = os.environ.get("SMOKE") == "true"


def per_call(f, arguments, floor=0.001 if SMOKE else 0.2):
    n, spent = 0, 0.0
    while spent < floor:
        batch = max(1, n or 100)
        start = time.perf_counter()
        for _ in range(batch):
            f(arguments)
        spent += time.perf_counter() - start
        n += batch
    return spent / n * 1e9


rows = []
for path in sorted(pathlib.Path(sys.argv[1]).glob("*.json")):
    if SMOKE and rows:
        break  # One catalog with a tool to time is enough.
    catalog = toolschema.Catalog.from_file(path)
    for name in catalog.names:
        schema = catalog.tool(name)["inputSchema"]
        if schema.get("type") != "object":
            continue
        try:
            ours = catalog.validator(name)
            rs = jsonschema_rs.validator_for(schema)
            py = jsonschema.validators.validator_for(schema)(schema)
        except Exception:
            continue
        valid, invalid = calls(schema)
        if not (ours.is_valid(valid) and rs.is_valid(valid) and py.is_valid(valid)):
            continue
        if ours.is_valid(invalid) or rs.is_valid(invalid) or py.is_valid(invalid):
            continue
        rows.append((
            f"{path.stem}/{name}",
            per_call(ours.is_valid, valid), per_call(rs.is_valid, valid), per_call(py.is_valid, valid),
            per_call(ours.validate, invalid),
            per_call(lambda a: [e.message for e in rs.iter_errors(a)], invalid),
            per_call(lambda a: [e.message for e in py.iter_errors(a)], invalid),
        ))

if not rows:
    sys.exit(f"no tool of {sys.argv[1]} could be timed: the three validators never agreed")


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]

print(f"{len(rows)} tools of {sys.argv[1]}; ns per call, median over the tools")
print(", ".join(f"{name} {metadata.version(name)}" for name in ("toolschema", "jsonschema-rs", "jsonschema")))
cols = list(zip(*rows))[1:]
names = ["valid: toolschema", "valid: jsonschema_rs", "valid: jsonschema",
         "invalid: toolschema", "invalid: jsonschema_rs", "invalid: jsonschema"]
for label, col in zip(names, cols):
    print(f"  {label:24} {median(col):10.0f}")
m = [median(c) for c in cols]
print(f"valid calls: toolschema / jsonschema_rs = {m[0] / m[1]:.2f}x; jsonschema / toolschema = {m[2] / m[0]:.1f}x")
print(f"invalid calls: toolschema / jsonschema_rs = {m[3] / m[4]:.2f}x; jsonschema / toolschema = {m[5] / m[3]:.1f}x")
PY
