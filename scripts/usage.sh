# Sourced first by the benchmark scripts: `SCRIPT --help` (or -h) prints the script's header
# comment (what it measures, how to run it) and exits 0, so the book's tests can check that each
# script it names exists and starts without running a benchmark.
# shellcheck shell=bash
case "${1:-}" in
  -h | --help)
    # The comment block after the shebang, without its leading "# ".
    awk 'NR == 1 { next } !/^#/ || /^# shellcheck/ { exit } { sub(/^# ?/, ""); print }' "$0"
    exit 0
    ;;
esac
