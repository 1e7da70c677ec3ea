#!/usr/bin/env bash
# Builds and tests the book in docs/: installs mdBook from crates.io into target/tools (once;
# skipped when that version is already there), then `mdbook build docs` and `mdbook test docs`,
# which must pass without a warning, then `cargo doc` of the library crates without a warning,
# then an offline check of every internal link of the built book, of the README and of docs/MOVED.md. The
# generated pages and the command lines of the book are checked by cargo test
# (crates/toolschema-cli/tests/docs_generated.rs and docs_examples.rs).
set -euo pipefail
cd "$(dirname "$0")/.."

MDBOOK_VERSION=0.4.52
TOOLS="$PWD/target/tools"
MDBOOK="$TOOLS/bin/mdbook"

if ! { [ -x "$MDBOOK" ] && [ "$("$MDBOOK" --version)" = "mdbook v$MDBOOK_VERSION" ]; }; then
  echo "==> installing mdbook $MDBOOK_VERSION into target/tools"
  # Only the search feature: the book is built, never served or watched. Unoptimised: it
  # builds in 131 s of CPU where the release profile takes 314 s, and a book this size is
  # built in seconds either way.
  cargo install mdbook --locked --version "$MDBOOK_VERSION" --root "$TOOLS" \
    --no-default-features --features search --debug --quiet
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT

# mdBook reports problems it can live with (a missing file, an unknown setting) as WARN and
# carries on: here they fail the build.
run() {
  if ! "$@" >"$log" 2>&1; then
    cat "$log"
    echo "error: $* failed" >&2
    exit 1
  fi
  if grep -E '\b(WARN|WARNING|ERROR)\b|warning:' "$log"; then
    echo "error: $* printed warnings (above)" >&2
    exit 1
  fi
}

echo "==> mdbook build docs"
run "$MDBOOK" build docs
echo "==> mdbook test docs"
run "$MDBOOK" test docs
echo "==> cargo doc (the library crates' own documentation, without a warning)"
RUSTDOCFLAGS="-D warnings" cargo doc -p toolschema -p toolschema-clap --no-deps --locked --quiet
echo "==> link check"
python3 scripts/check-links.py target/book README.md docs/MOVED.md
