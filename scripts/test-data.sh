#!/usr/bin/env bash
# Puts the data the tests read into an ignored folder of the repository ($TOOLSCHEMA_TEST_DATA,
# default target/test-data), the same way on every machine:
#
#   json-schema-test-suite/   the official JSON Schema Test Suite (tests/, remotes/), unpacked from
#                             the source distribution of the PyPI package jsonschema (pinned below;
#                             its json/ folder is the suite), downloaded once
#   catalogs/everything.json  `toolschema snapshot` of the pinned npm server-everything,
#   catalogs/filesystem.json  of server-filesystem (rooted in an empty folder),
#   catalogs/memory.json      of server-memory (its memory file in a scratch folder),
#   catalogs/time.json        of PyPI mcp-server-time,
#   catalogs/git.json         of mcp-server-git (on an empty scratch repository),
#   catalogs/fetch.json       and of mcp-server-fetch, captured anew on every run
#
# Needs what scripts/test.sh installs first: interop/node_modules, .venv, and a built
# target/debug/toolschema (or $TOOLSCHEMA_BIN). scripts/test.sh calls it; run it alone to refresh
# the data before `cargo test`.
set -euo pipefail
cd "$(dirname "$0")/.."

JSONSCHEMA_VERSION=4.26.0
data=${TOOLSCHEMA_TEST_DATA:-target/test-data}
toolschema=${TOOLSCHEMA_BIN:-${CARGO_TARGET_DIR:-target}/debug/toolschema}
python=.venv/bin/python

for needed in "$python" interop/node_modules/.bin/mcp-server-everything "$toolschema"; do
  if [ ! -x "$needed" ]; then
    echo "test-data: $needed is missing; run ./scripts/test.sh (it installs and builds it)" >&2
    exit 2
  fi
done
mkdir -p "$data/catalogs"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

suite="$data/json-schema-test-suite"
if [ "$(cat "$suite/VERSION" 2>/dev/null)" != "jsonschema $JSONSCHEMA_VERSION" ]; then
  echo "==> JSON Schema Test Suite from the jsonschema $JSONSCHEMA_VERSION source distribution"
  download="$scratch/download"
  # --no-binary for jsonschema alone: the source distribution carries json/, the wheel does not.
  "$python" -m pip download --quiet --disable-pip-version-check --no-deps \
    --no-binary jsonschema "jsonschema==$JSONSCHEMA_VERSION" -d "$download"
  tar xzf "$download/jsonschema-$JSONSCHEMA_VERSION.tar.gz" -C "$download"
  rm -rf "$suite"
  mv "$download/jsonschema-$JSONSCHEMA_VERSION/json" "$suite"
  echo "jsonschema $JSONSCHEMA_VERSION" > "$suite/VERSION"
fi

echo "==> real catalogs from live servers"
root="$scratch/root"
mkdir "$root"
"$toolschema" snapshot -o "$data/catalogs/everything.json" -- \
  interop/node_modules/.bin/mcp-server-everything
"$toolschema" snapshot -o "$data/catalogs/filesystem.json" -- \
  interop/node_modules/.bin/mcp-server-filesystem "$root"
MEMORY_FILE_PATH="$scratch/memory.jsonl" "$toolschema" snapshot -o "$data/catalogs/memory.json" -- \
  interop/node_modules/.bin/mcp-server-memory
"$toolschema" snapshot -o "$data/catalogs/time.json" -- .venv/bin/mcp-server-time
repository="$scratch/repository"
git init --quiet "$repository"
"$toolschema" snapshot -o "$data/catalogs/git.json" -- .venv/bin/mcp-server-git --repository "$repository"
"$toolschema" snapshot -o "$data/catalogs/fetch.json" -- .venv/bin/mcp-server-fetch
