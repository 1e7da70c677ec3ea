#!/usr/bin/env bash
# Figures of the packages in target/dist/ (scripts/package.sh): their sizes, how long installing
# them from the local files takes, and the start-up time of `toolschema --version` installed from
# the wheel against `ruff --version` installed from PyPI (another Rust command shipped the same
# way), measured in the same run with hyperfine (Debian's package; installed if missing).
# "Cold" is each command's first run right after its install; the mean is hyperfine's over
# warm runs. Nothing is asserted of the figures: it prints them. It fails when an installed
# command does not print the version of the packages.
#
#   ./scripts/bench-install.sh          after ./scripts/package.sh (the `packaged` profile)
#   ./scripts/bench-install.sh --smoke  the packages target/dist holds (the test command's are
#                                       built from the dev profile); ruff from target/dist-tools
#                                       (packaging/requirements.txt) instead of a download;
#                                       3 warm runs a command
# shellcheck source=scripts/usage.sh
source "$(dirname "$0")/usage.sh"
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
dist=$root/target/dist
tools=$root/target/dist-tools
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n1)
ruff_version=$(sed -n 's/^ruff==//p' packaging/requirements.txt)

shopt -s nullglob
wheels=("$dist"/toolschema-"$version"-cp39-abi3-*.whl)
sdists=("$dist"/toolschema-"$version".tar.gz)
npms=("$dist"/toolschema-"$version".tgz "$dist"/toolschema-cli-*-"$version".tgz)
shopt -u nullglob
[ "${#wheels[@]}" -eq 1 ] || { echo "no wheel in $dist: run scripts/package.sh" >&2; exit 1; }
if ! command -v hyperfine >/dev/null; then
  apt-get install -y -qq hyperfine >/dev/null
fi
if $smoke; then
  runs=(--warmup 0 --runs 3)
  npx_runs=(--warmup 0 --runs 3)
else
  runs=(--warmup 5 --runs 100)
  npx_runs=(--warmup 2 --runs 20)
fi

scratch=$(mktemp -d "${TMPDIR:-/tmp}/toolschema-bench.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
# first_run COMMAND...: the wall time of one run, in milliseconds.
first_run() { local t; t=$(date +%s%N); "$@" >/dev/null; ms "$t"; }
# says_version COMMAND...: fails unless it prints `toolschema VERSION (commit ...`.
says_version() {
  local shown
  shown=$("$@")
  case "$shown" in
    "toolschema $version (commit "*) ;;
    *) echo "$*: printed '$shown', not toolschema $version (commit ...)" >&2; return 1 ;;
  esac
}

echo "== sizes"
# size NAME BYTES: in KiB below a MiB, else in MiB.
size() {
  if [ "$2" -lt 1048576 ]; then
    printf '%-60s %8.1f KiB\n' "$1" "$(echo "$2 / 1024" | bc -l)"
  else
    printf '%-60s %8.1f MiB\n' "$1" "$(echo "$2 / 1048576" | bc -l)"
  fi
}
for f in "${wheels[@]}" "${sdists[@]}" "${npms[@]}"; do
  size "$(basename "$f")" "$(stat -c %s "$f")"
done
size "the binary (unpacked)" "$(unzip -l "${wheels[0]}" | awk '/data\/scripts\/toolschema$/ {print $1}')"

echo "== install from the local files"
python3 -m venv "$scratch/venv"
t=$(date +%s%N)
"$scratch/venv/bin/pip" install --quiet --disable-pip-version-check --no-index "${wheels[0]}"
echo "pip install of the wheel (venv made beforehand): $(ms "$t") ms"
toolschema_cold=$(first_run "$scratch/venv/bin/toolschema" --version)
says_version "$scratch/venv/bin/toolschema" --version
mkdir -p "$scratch/npm"
echo '{"name": "bench", "version": "1.0.0", "private": true}' >"$scratch/npm/package.json"
t=$(date +%s%N)
(cd "$scratch/npm" && npm install --offline --no-audit --no-fund --loglevel=error "${npms[@]}")
echo "npm install of the two tarballs: $(ms "$t") ms"
npx_cold=$(cd "$scratch/npm" && first_run npx --no-install toolschema --version)
(cd "$scratch/npm" && says_version npx --no-install toolschema --version)

echo "== ruff $ruff_version from PyPI, for comparison"
if $smoke; then
  # No download: the ruff scripts/package.sh installed, same version.
  ruff=$tools/bin/ruff
  [ -x "$ruff" ] || { echo "no $ruff: run scripts/package.sh" >&2; exit 1; }
  echo "pip install ruff: not measured in smoke mode"
else
  python3 -m venv "$scratch/ruff-venv"
  t=$(date +%s%N)
  "$scratch/ruff-venv/bin/pip" install --quiet --disable-pip-version-check "ruff==$ruff_version"
  echo "pip install ruff (from PyPI, download included): $(ms "$t") ms"
  ruff=$scratch/ruff-venv/bin/ruff
fi
ruff_cold=$(first_run "$ruff" --version)

echo "== start-up: first run after install"
echo "toolschema --version (wheel): ${toolschema_cold} ms"
echo "ruff --version (PyPI):        ${ruff_cold} ms"
echo "npx toolschema --version:     ${npx_cold} ms"
echo "== start-up: warm (hyperfine)"
hyperfine "${runs[@]}" -N \
  "$scratch/venv/bin/toolschema --version" \
  "$ruff --version" \
  --export-markdown "$scratch/startup.md" >/dev/null
cat "$scratch/startup.md"
(cd "$scratch/npm" && hyperfine "${npx_runs[@]}" -N "npx --no-install toolschema --version" \
  "node node_modules/toolschema/bin/toolschema.js --version" --export-markdown "$scratch/npx.md" >/dev/null)
cat "$scratch/npx.md"
