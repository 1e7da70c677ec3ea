# Sourced first by the benchmark scripts, for two conventions they all share:
#
# - `SCRIPT --help` (or -h) prints the script's header comment (what it measures, how to run it)
#   and exits 0.
# - `SCRIPT --smoke [ARGS]` runs the script's own code on tiny inputs, in seconds, with the debug
#   binaries the test command builds (target/debug/, or $TOOLSCHEMA_BIN for toolschema), never a
#   release build. The script still checks what it checks (exit codes, outputs parsed), so the
#   test command (scripts/test.sh) runs every benchmark this way. Its figures mean nothing.
#   Options and variables given with it (`--calls 50`, RUNS=3) win over its tiny ones.
#
# Sets `smoke` (true or false), takes `--smoke` out of the arguments, and defines bench_binary.
# shellcheck shell=bash
case "${1:-}" in
  -h | --help)
    # The comment block after the shebang, without its leading "# ".
    awk 'NR == 1 { next } !/^#/ || /^# shellcheck/ { exit } { sub(/^# ?/, ""); print }' "$0"
    exit 0
    ;;
esac

smoke=false
bench_arguments=()
for bench_argument in "$@"; do
  if [ "$bench_argument" = --smoke ]; then
    smoke=true
  else
    bench_arguments+=("$bench_argument")
  fi
done
set -- "${bench_arguments[@]}"
unset bench_argument bench_arguments

# bench_binary NAME PACKAGE: prints the path of the binary NAME of PACKAGE that a benchmark runs.
# In smoke mode it is the debug one ($TOOLSCHEMA_BIN for toolschema), built first only when it is
# missing; otherwise the release one, built now (cargo's progress goes to standard error).
bench_binary() {
  local name=$1 package=$2 target=${CARGO_TARGET_DIR:-$PWD/target}
  if $smoke; then
    local binary="$target/debug/$name"
    if [ "$name" = toolschema ] && [ -n "${TOOLSCHEMA_BIN:-}" ]; then
      binary=$TOOLSCHEMA_BIN
    fi
    if [ ! -x "$binary" ]; then
      cargo build --locked -p "$package" >&2
    fi
    if [ ! -x "$binary" ]; then
      echo "$0: $binary is missing after the build" >&2
      return 2
    fi
    echo "$binary"
  else
    cargo build --release --locked -p "$package" >&2
    echo "$target/release/$name"
  fi
}
