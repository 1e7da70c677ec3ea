# Sourced by the benchmarks that run on the 10,000-tool catalog (bench-lint.sh, bench-adapt.sh):
# builds that catalog from the real catalogs scripts/test-data.sh captured into
# target/test-data/catalogs (tools renamed to be unique, pretty-printed, about 12 MB) into a
# temporary folder removed on exit, and builds toolschema in release mode.
# Sets `catalog` (the catalog's path) and `toolschema` (the binary's path).

CATALOGS=${TOOLSCHEMA_TEST_DATA:-target/test-data}/catalogs
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
catalog="$work/catalog-10k.json"

for name in everything filesystem; do
  if [ ! -f "$CATALOGS/$name.json" ]; then
    echo "$CATALOGS/$name.json is missing: run ./scripts/test.sh (or ./scripts/test-data.sh) first" >&2
    exit 2
  fi
done

echo "==> building the 10,000-tool catalog from $CATALOGS"
python3 scripts/bench-catalog.py "$CATALOGS" "$catalog"

echo "==> building toolschema (release)"
cargo build --release --locked -p toolschema-cli
toolschema="$PWD/target/release/toolschema"
