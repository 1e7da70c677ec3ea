# Sourced by the benchmarks that run on the 10,000-tool catalog (bench-lint.sh, bench-adapt.sh):
# builds that catalog from the real catalogs scripts/test-data.sh captured into
# target/test-data/catalogs (tools renamed to be unique, pretty-printed, about 12 MB) into a
# temporary folder removed on exit, and builds toolschema in release mode. In smoke mode (see
# scripts/usage.sh) the catalog has 200 tools and the binary is the debug one.
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

tool_count=10000
if $smoke; then tool_count=200; fi
echo "==> building the $tool_count-tool catalog from $CATALOGS"
python3 scripts/bench-catalog.py "$CATALOGS" "$catalog" "$tool_count"

echo "==> toolschema ($(if $smoke; then echo "debug, smoke mode"; else echo release; fi))"
toolschema=$(bench_binary toolschema toolschema-cli)
